/**
 * The DynamoDB implementations the state table's suites run against: dynalite (in process, what the local
 * stack uses; the `*.test.ts` files) and moto's server (a separate Python process; `moto.e2e.test.ts`). Each
 * suite is written once against `DynamoBackend`; the file that runs it owns the server (one per file).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { MOTO_CREDENTIALS, type MotoServer, startMotoServer } from '../../support/moto-server.ts';

export interface DynamoBackend {
  readonly name: 'dynalite' | 'moto';
  readonly client: DynamoDBClient;
  /** How many requests of one operation (`BatchGetItem`, ...) the client has sent so far. */
  requests(operation: string): number;
}

/**
 * A DynamoDB behaviour the product relies on that a backend gets wrong, judged by AWS's documentation; a suite
 * leaves the tests of it to the backends without the gap (each gap also has a test proving it, so a fixed
 * backend is noticed).
 * - `consumed-write-units`: a write consumes one write unit per started KB of the item (UpdateItem: the larger
 *   of the item before and after), at least 1 (DynamoDB developer guide, "Read/write capacity mode" and
 *   "UpdateItem"); moto reports a constant 0.5 for every UpdateItem.
 * - `atomic-conditional-writes`: a conditional write checks and writes as one, so of two concurrent writes
 *   conditioned on the same version exactly one succeeds (DynamoDB developer guide, "Condition expressions").
 *   moto's server answers each request on a thread of its own with no lock around a table's check and write:
 *   in a fresh-clone run on 2026-12-07 both of two concurrent conditional PutItems on one rollout's state item
 *   succeeded. The race depends on when Python switches threads, so no test can prove it every time: this gap
 *   alone has none, and the tests that race two conditional writes run on dynalite only.
 */
export type KnownGap = 'consumed-write-units' | 'atomic-conditional-writes';

/** Called at test time: the backend exists once the owning file's beforeAll has run. */
export interface BackendRef {
  (): DynamoBackend;
  readonly backendName: DynamoBackend['name'];
  readonly gaps: ReadonlySet<KnownGap>;
}

/** Counts every command the client sends, by operation, before retries (what the code under test asked for). */
function countRequests(client: DynamoDBClient): (operation: string) => number {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => (args) => {
      const command = context.commandName ?? '(unnamed)';
      counts.set(command, (counts.get(command) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countRequestsByOperation' },
  );
  return (operation) => counts.get(`${operation}Command`) ?? 0;
}

function refTo(
  backendName: DynamoBackend['name'],
  gaps: readonly KnownGap[],
  get: () => DynamoBackend | undefined,
): BackendRef {
  const ref = () => {
    const backend = get();
    if (!backend) throw new Error(`${backendName} is not running: use the backend inside a test or hook`);
    return backend;
  };
  return Object.assign(ref, { backendName, gaps: new Set(gaps) });
}

/** dynalite in this process for the calling file's tests (dev/local/dynamodb.ts, as the local stack runs it). */
export function useDynalite(): BackendRef {
  let dynamo: LocalDynamo | undefined;
  let backend: DynamoBackend | undefined;
  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    backend = { name: 'dynalite', client: dynamo.client, requests: countRequests(dynamo.client) };
  });
  afterAll(() => dynamo?.stop());
  return refTo('dynalite', [], () => backend);
}

/** moto's server for the calling file's tests (test/support/moto-server.ts). */
export function useMoto(): BackendRef {
  let server: MotoServer | undefined;
  let backend: DynamoBackend | undefined;
  beforeAll(async () => {
    server = await startMotoServer();
    const client = new DynamoDBClient({
      endpoint: server.endpoint,
      region: 'eu-west-1',
      credentials: MOTO_CREDENTIALS,
      maxAttempts: 2,
    });
    backend = { name: 'moto', client, requests: countRequests(client) };
  });
  afterAll(async () => {
    backend?.client.destroy();
    await server?.stop();
  });
  return refTo('moto', ['consumed-write-units', 'atomic-conditional-writes'], () => backend);
}
