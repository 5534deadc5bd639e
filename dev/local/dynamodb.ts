/**
 * The local DynamoDB: dynalite in process on a loopback port the OS picks, and the state table created
 * from the same key schema serverless.yml uses (adapters/state-table/keys.ts).
 */

import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { ATTRIBUTE_DEFINITIONS, BILLING_MODE, KEY_SCHEMA } from '../../adapters/state-table/keys.ts';
import { rememberDynaliteParses } from './dynalite-expressions.ts';
import { type TableUsage, TableUsageMeter } from './table-usage.ts';

const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: Record<string, unknown>) => import('node:http').Server;

export interface LocalDynamo {
  endpoint: string;
  client: DynamoDBClient;
  /** Read and write request units consumed so far, as on-demand DynamoDB would bill them (dev/local/table-usage.ts). */
  usage(): TableUsage;
  stop(): Promise<void>;
}

/** Credentials the local endpoint accepts; dynalite checks only that a signature is present. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'local', credentials: LOCAL_CREDENTIALS, maxAttempts: 2 });
}

export interface LocalDynamoOptions {
  /**
   * Keep the tables in this directory (LevelDB, through the prebuilt classic-level binding dynalite 4 ships)
   * so they outlive the process, a kill -9 included. Default: in memory, gone on exit.
   */
  path?: string;
}

export async function startLocalDynamo(opts: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  rememberDynaliteParses();
  // Tables become ACTIVE at once: nothing waits on CREATING in the local stack or tests.
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(opts.path ? { path: opts.path } : {}),
  });
  const meter = new TableUsageMeter();
  const [handler] = server.listeners('request') as import('node:http').RequestListener[];
  server.removeAllListeners('request');
  const inFlight = new InFlightRequests();
  server.on('request', inFlight.wrap(meter.wrap(handler)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localDynamoClient(endpoint);
  let stopped = false;
  return {
    endpoint,
    client,
    usage: () => meter.snapshot(),
    async stop() {
      if (stopped) return;
      stopped = true;
      // Closing the server closes dynalite's database, and a request still being worked on then throws from
      // inside dynalite ("Database is closed"), uncaught, which ends the process (a stack restart in the soak
      // hit this). So: refuse new requests, let those under way finish, then close.
      await inFlight.drain(STOP_DRAIN_MS);
      client.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** How long a stop waits for the requests under way; a request still running then may still crash dynalite. */
const STOP_DRAIN_MS = 5_000;

/**
 * Counts the requests dynalite is working on, and once draining answers new ones at once with a
 * retryable 503 (the SDK's ServiceUnavailable) instead of handing them to a database about to close.
 */
class InFlightRequests {
  #count = 0;
  #draining = false;
  #idle: (() => void)[] = [];

  wrap(handler: import('node:http').RequestListener): import('node:http').RequestListener {
    return (req, res) => {
      if (this.#draining) {
        res.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailableException',
            message: 'the local table is stopping',
          }),
        );
        return;
      }
      this.#count += 1;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        this.#count -= 1;
        if (this.#count === 0) for (const resolve of this.#idle.splice(0)) resolve();
      };
      // dynalite answers every request it takes through res.end, also for a client that has gone.
      const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
      res.end = ((...args: unknown[]) => {
        finish();
        return end(...args);
      }) as typeof res.end;
      handler(req, res);
    };
  }

  /** Refuses new requests and resolves once none is under way, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void> {
    this.#draining = true;
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Creates the state table if it does not exist and waits until it is ACTIVE. */
export async function ensureTable(client: DynamoDBClient, name: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        KeySchema: KEY_SCHEMA,
        AttributeDefinitions: ATTRIBUTE_DEFINITIONS,
        BillingMode: BILLING_MODE,
      }),
    );
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  const deadline = Date.now() + 10_000;
  for (;;) {
    const out = await client.send(new DescribeTableCommand({ TableName: name }));
    if (out.Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`table ${name} did not become ACTIVE within 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
