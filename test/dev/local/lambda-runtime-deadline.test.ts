/**
 * The in-process runtime's timeout stops a pass's writes (dev/local/lambda-runtime.ts): a reconcile held up
 * by a slow apiserver read past its deadline writes neither the state table nor the cluster afterwards, and
 * the read it was waiting on is aborted. The slow dependency is a proxy the test controls in front of the real
 * local apiserver and the local DynamoDB; the held read is let through only after the deadline, so a pass that
 * kept running would write then (as it did when the timeout was only a Promise.race).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient } from '../../../adapters/kubernetes/index.ts';
import { createStateTable, putItem, registerCluster } from '../../../adapters/state-table/index.ts';
import { ensureTable, type LocalDynamo, localDynamoClient, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { localObservability } from '../../../dev/local/fleet/observability.ts';
import { createIfMissing } from '../../../dev/local/fleet/seed.ts';
import { type Handler, isTimeout, LocalFunction } from '../../../dev/local/lambda-runtime.ts';
import { DEADLINE_MARGIN_MS } from '../../../functions/common/observed-handler.ts';
import { createReconcileHandler } from '../../../functions/reconcile/handler.ts';
import { type HoldingProxy, isWrite, type SeenRequest, startHoldingProxy } from '../../e2e/aws/holding-proxy.ts';
import { startTestCluster, type TestCluster } from '../../support/local-cluster.ts';
import { waitFor } from '../../support/wait.ts';

const TABLE = 'deadline-test';
const CLUSTER = 'c1';

let dynamo: LocalDynamo;
let cluster: TestCluster;
let kubeProxy: HoldingProxy;
let tableProxy: HoldingProxy;

beforeAll(async () => {
  [dynamo, cluster] = await Promise.all([startLocalDynamo(), startTestCluster()]);
  await ensureTable(dynamo.client, TABLE);
  [kubeProxy, tableProxy] = await Promise.all([
    startHoldingProxy(cluster.cluster.url),
    startHoldingProxy(dynamo.endpoint),
  ]);
  const table = createStateTable({ client: dynamo.client, tableName: TABLE });
  await registerCluster(table, { id: CLUSTER, access: { kind: 'url', url: kubeProxy.url } }, new Date());
}, 60_000);

afterAll(async () => {
  await Promise.all([kubeProxy?.stop(), tableProxy?.stop()]);
  await Promise.all([dynamo?.stop(), cluster?.stop()]);
});

const edgePool = (name: string) => ({
  apiVersion: 'apps.openyurt.io/v1beta1',
  kind: 'NodePool',
  metadata: { name },
  spec: { type: 'Edge' },
});

const reconcileRequest = (pool: string) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Reconcile Request',
  source: 'pool-spirit.reconciler',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'local',
  resources: [],
  detail: { clusterId: CLUSTER, nodePool: pool, reason: 'test', requestedBy: 'e2e' },
});

/** Requests about one pool (its path, or its table keys in the body). */
const about = (pool: string) => (r: SeenRequest) => r.path.includes(pool) || r.body.includes(pool);

/** Records when the handler's own promise settles: after that the pass can write nothing more. */
function tracked(handler: Handler): { handler: Handler; settled: () => number | undefined } {
  let settledAt: number | undefined;
  return {
    handler: (e, c) =>
      handler(e, c).finally(() => {
        settledAt = Date.now();
      }),
    settled: () => settledAt,
  };
}

/** Invokes, holding the pool's apiserver reads, and returns what was seen once the pass has ended. */
async function invokePastDeadline(fn: LocalFunction, pool: string, event: unknown, settled: () => number | undefined) {
  kubeProxy.hold((r) => r.method === 'GET' && r.path.includes(pool));
  const startedAt = Date.now();
  const deadline = startedAt + fn.options.timeoutMs;
  const failure = await fn.invoke(event).then(
    () => undefined,
    (err: unknown) => err,
  );
  const endedAt = Date.now();
  const held = () => kubeProxy.seen.filter((r) => r.held && !r.released && about(pool)(r));
  // An aborted read closes its connection; the proxy hears of it a moment later.
  await waitFor(() => held().length > 0 && held().every((r) => r.clientGone), 2_000, 'the held reads to be aborted');
  // The held read is let through only now: a pass still running would get its answer and go on writing.
  kubeProxy.release();
  await waitFor(settled, 10_000, 'the timed-out pass to end');
  const writes = [...kubeProxy.seen, ...tableProxy.seen].filter((r) => isWrite(r) && about(pool)(r));
  return {
    failure,
    startedAt,
    deadline,
    endedAt,
    held: kubeProxy.seen.filter((r) => r.held && about(pool)(r)),
    writes,
  };
}

describe('LocalFunction deadline', () => {
  it('stops a timed-out reconcile pass: no table or cluster write after its deadline', async () => {
    const pool = 'slow-pool';
    await createIfMissing(cluster.api, edgePool(pool));
    const reconcile = tracked(
      createReconcileHandler({
        table: createStateTable({ client: localDynamoClient(tableProxy.url), tableName: TABLE }),
        ...localObservability('pool-spirit-reconciler'),
      }),
    );
    const fn = new LocalFunction(reconcile.handler, {
      name: 'reconcile',
      timeoutMs: DEADLINE_MARGIN_MS + 1_500,
      concurrency: 1,
    });
    const seen = await invokePastDeadline(fn, pool, reconcileRequest(pool), reconcile.settled);

    expect(isTimeout(seen.failure)).toBe(true);
    expect(fn.stats.timeouts).toBe(1);
    expect(seen.endedAt).toBeLessThanOrEqual(seen.deadline);
    // The pass had started writing (its lease) and was waiting on the held read when time ran out ...
    expect(seen.writes.filter((r) => r.target).length).toBeGreaterThan(0);
    expect(seen.held.length).toBeGreaterThan(0);
    // ... which was aborted, by the deadline, not answered later,
    for (const r of seen.held) {
      expect(r.clientGone).toBe(true);
      expect(r.clientGoneAt).toBeLessThanOrEqual(seen.deadline);
    }
    // and nothing was written about the pool after the deadline (nor, here, after the invocation ended).
    const last = Math.max(...seen.writes.map((r) => r.at));
    expect(last).toBeLessThanOrEqual(seen.endedAt);
    expect(seen.writes.filter((r) => r.at > seen.deadline)).toEqual([]);
  }, 30_000);

  it('stops the adapters of a handler without middy at the runtime deadline', async () => {
    const pool = 'plain-pool';
    await createIfMissing(cluster.api, edgePool(pool));
    const table = createStateTable({ client: localDynamoClient(tableProxy.url), tableName: TABLE });
    const client = createClusterClient({ server: kubeProxy.url }, { clusterId: CLUSTER });
    const plain = tracked(async () => {
      await client.getNodePool(pool);
      await putItem(table, { Item: { pk: `test#${pool}`, sk: 'late' } });
      await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: pool, namespace: 'default' } });
    });
    const fn = new LocalFunction(plain.handler, { name: 'plain', timeoutMs: 400, concurrency: 1 });
    const seen = await invokePastDeadline(fn, pool, {}, plain.settled);

    expect(seen.failure).toMatchObject({ name: 'FunctionTimeoutError' });
    expect(seen.held.length).toBeGreaterThan(0);
    for (const r of seen.held) expect(r.clientGone).toBe(true);
    expect(seen.writes).toEqual([]);
  }, 30_000);
});
