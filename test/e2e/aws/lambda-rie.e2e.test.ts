/**
 * The exact zips `npm run package` writes, every function of serverless.yml, run by AWS's own Lambda runtime
 * code: the Runtime Interface Emulator with the Node.js runtime interface client on Node 22, with the handler
 * string and environment the CloudFormation template gives each function. Judged here: the cold start (its
 * init phase, from the emulator's REPORT line), a normal invocation against a real local DynamoDB and a real
 * local apiserver, a thrown error in AWS's shape, the invocation context (request id, name, memory, remaining
 * time) and a timeout that really stops the pass: no write lands after its deadline.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, registerCluster } from '../../../adapters/state-table/index.ts';
import { type LocalBus, startLocalBus } from '../../../dev/local/bus/index.ts';
import { parseServerlessYaml } from '../../../dev/local/bus/serverless-config.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { createClusterCa } from '../../../dev/local/fleet/cluster-ca.ts';
import { poolName, seedCluster } from '../../../dev/local/fleet/seed.ts';
import { type RieFunction, rieMissing, startRieFunction } from '../../../dev/local/functions/rie.ts';
import { DEADLINE_MARGIN_MS } from '../../../functions/common/observed-handler.ts';
import { ROOT } from '../../../scripts/bundle-functions.ts';
import { startTestCluster, type TestCluster } from '../../support/local-cluster.ts';
import { packaged } from '../../support/packaged.ts';
import { waitFor } from '../../support/wait.ts';
import { type HoldingProxy, isWrite, type SeenRequest, startHoldingProxy } from './holding-proxy.ts';

const TABLE = 'pool-spirit-reconciler-dev-state';
const BUS = 'pool-spirit-reconciler-dev';
const CLUSTER = 'c1';
const DOWN_CLUSTER = 'down';
const POOL = poolName(0);
const SLOW_POOL = poolName(1);
/** The timeout run's budget: short, so the test takes seconds (the template's is 60 s). */
const SHORT_TIMEOUT_S = 3;

interface TemplateFunction {
  Handler: string;
  MemorySize: number;
  Timeout: number;
  Environment: { Variables: Record<string, unknown> };
}

const logicalId = (name: string) => `${name[0].toUpperCase()}${name.slice(1)}LambdaFunction`;

/** An address nothing listens on: a client sent there fails at once instead of reaching AWS. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const envelope = (source: string, detailType: string, detail: Record<string, unknown>) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': detailType,
  source,
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'eu-west-1',
  resources: [],
  detail,
});
const reconcileRequest = (clusterId: string, nodePool: string) =>
  envelope('pool-spirit.reconciler', 'Reconcile Request', { clusterId, nodePool, reason: 'e2e', requestedBy: 'e2e' });

/** A minimal valid event of each function, as its rules deliver it (serverless.yml). */
const NORMAL_EVENTS: Record<string, () => unknown> = {
  reconcile: () => reconcileRequest(CLUSTER, POOL),
  audit: () =>
    envelope('pool-spirit.reconciler', 'Cluster Audit Request', {
      clusterId: CLUSTER,
      runId: randomUUID(),
      requestedAt: new Date().toISOString(),
      requestedBy: 'e2e',
    }),
  cloudEvents: () =>
    envelope('aws.ec2', 'EC2 Instance State-change Notification', {
      'instance-id': 'i-0123456789abcdef0',
      state: 'terminated',
    }),
  // The schedule rule's constant input (serverless.yml).
  rollout: () => ({ command: 'tick', requestedBy: 'schedule' }),
  probe: () => envelope('pool-spirit.reconciler', 'Leader Probe Request', { clusterId: CLUSTER }),
};

let dynamo: LocalDynamo;
let bus: LocalBus;
let cluster: TestCluster;
let kubeProxy: HoldingProxy;
let tableProxy: HoldingProxy;
const functions = new Map<string, RieFunction>();
let functionNames: string[] = [];
let template: Record<string, TemplateFunction>;

/** The template's environment of a function, its references resolved to the local stand-ins. */
function environmentOf(fn: TemplateFunction, dlqBase: string): Record<string, string> {
  const refs: Record<string, string> = { StateTable: TABLE, EventBus: BUS, ClusterAccess: 'eks' };
  return Object.fromEntries(
    Object.entries(fn.Environment.Variables).map(([name, value]) => {
      if (typeof value === 'string') return [name, value];
      const ref = (value as { Ref?: string }).Ref;
      if (ref && refs[ref]) return [name, refs[ref]];
      if (ref?.endsWith('DeadLetterQueue')) return [name, `${dlqBase}/000000000000/${ref}`];
      throw new Error(`Environment.Variables.${name}: no local value for ${JSON.stringify(value)}`);
    }),
  );
}

beforeAll(async () => {
  // Built by scripts/lambda-rie.sh (run by scripts/ensure-env.sh --tests): say so rather than skip.
  const missing = rieMissing();
  if (missing) throw new Error(missing);
  const [pkg, d, c, serverless, b] = await Promise.all([
    packaged(),
    startLocalDynamo(),
    startTestCluster(),
    readFile(`${ROOT}/serverless.yml`, 'utf8'),
    // EventBridge (events the functions send on) and SQS (dead letters): the local bus serves both.
    startLocalBus({ rules: [], targets: {}, eventBuses: [BUS], region: 'eu-west-1' }),
  ]);
  [dynamo, cluster, bus] = [d, c, b];
  functionNames = Object.keys(parseServerlessYaml(serverless).functions as Record<string, unknown>);
  const resources = JSON.parse(await readFile(pkg.templatePath, 'utf8')).Resources as Record<
    string,
    { Properties: TemplateFunction }
  >;
  template = Object.fromEntries(functionNames.map((n) => [n, resources[logicalId(n)].Properties]));
  await ensureTable(dynamo.client, TABLE);
  [kubeProxy, tableProxy] = await Promise.all([
    startHoldingProxy(cluster.cluster.url),
    startHoldingProxy(dynamo.endpoint),
  ]);
  const table = createStateTable({ client: dynamo.client, tableName: TABLE });
  const nowhere = await closedPort();
  await Promise.all([
    registerCluster(table, { id: CLUSTER, access: { kind: 'url', url: kubeProxy.url } }, new Date()),
    // What a cluster with the product installed has: CRDs, the cluster CA, two edge pools with a node each.
    createClusterCa().then((ca) => seedCluster(cluster.kc, { pools: 2, nodesPerPool: 1 }, ca.certPem)),
  ]);
  // The SDK's own variables point each AWS client at a local endpoint: DynamoDB through the recording proxy,
  // EventBridge and SQS at the local bus, Secrets Manager at an address that refuses: nothing leaves the machine.
  const aws = {
    AWS_REGION: 'eu-west-1',
    AWS_DEFAULT_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: tableProxy.url,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    AWS_ENDPOINT_URL_SQS: bus.endpoint,
    // Powertools then logs each event with the Lambda context the runtime handed the handler (not a secret:
    // the events here are the test's own).
    POWERTOOLS_LOGGER_LOG_EVENT: 'true',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: nowhere,
  };
  const start = (name: string, instance: string, timeoutSeconds?: number) => {
    const fn = template[name];
    return startRieFunction({
      zipPath: pkg.zipPath(name),
      handler: fn.Handler,
      functionName: `pool-spirit-reconciler-dev-${name}`,
      timeoutSeconds: timeoutSeconds ?? fn.Timeout,
      memorySizeMb: fn.MemorySize,
      environment: { ...environmentOf(fn, bus.endpoint), ...aws },
    }).then((f) => functions.set(instance, f));
  };
  await Promise.all([...functionNames.map((n) => start(n, n)), start('reconcile', 'reconcile-short', SHORT_TIMEOUT_S)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([...functions.values()].map((f) => f.stop()));
  await Promise.all([kubeProxy?.stop(), tableProxy?.stop()]);
  await Promise.all([dynamo?.stop(), cluster?.stop(), bus?.stop()]);
});

const fn = (instance: string) => functions.get(instance)!;
/** The request id each function's normal invocation was given. */
const requestIds: Record<string, string> = {};

async function poolSpiritNames(): Promise<string[]> {
  const list = await cluster.api.list('poolspirit.io/v1alpha1', 'PoolSpirit');
  return list.items.map((o) => o.metadata?.name ?? '');
}

describe('packaged functions under the Lambda Runtime Interface Emulator', () => {
  it('runs every function of serverless.yml from its zip: init phase, then a normal invocation', async () => {
    expect(functionNames.sort()).toEqual(Object.keys(NORMAL_EVENTS).sort());
    for (const n of functionNames) requestIds[n] = randomUUID();
    const results = await Promise.all(functionNames.map((n) => fn(n).invoke(NORMAL_EVENTS[n](), requestIds[n])));
    const figures: Record<string, unknown> = {};
    functionNames.forEach((name, i) => {
      const result = results[i];
      expect(result.status, `${name}: ${JSON.stringify(result.body)}`).toBe(200);
      expect(result.body, `${name}: ${JSON.stringify(result.body)}`).not.toHaveProperty('errorType');
      // One cold start, measured by the emulator: its REPORT line carries the init phase's duration.
      const inits = fn(name).initDurations();
      expect(inits, `${name} logs:\n${fn(name).logs().slice(-3000)}`).toHaveLength(1);
      expect(inits[0]).toBeGreaterThan(0);
      expect(fn(name).logs()).toContain(`START RequestId: ${requestIds[name]} Version: $LATEST`);
      figures[name] = { initMs: inits[0], invokeMs: result.answeredAt - result.sentAt };
    });
    console.info(`lambda-rie figures ${JSON.stringify(figures)}`);
    // The reconcile pass did its work: the pool's PoolSpirit exists in the cluster.
    expect(await poolSpiritNames()).toContain(POOL);
  });

  it('gives the handler the invocation context: request id, function name, memory size', async () => {
    // Powertools' logger stamps every line with the Lambda context the runtime handed the handler. (The
    // remaining time is judged by the timeout below: the pass is stopped a fixed margin before it runs out.)
    const log = fn('audit').logs();
    expect(log).toMatch(/"function_name":"pool-spirit-reconciler-dev-audit"/);
    expect(log).toMatch(/"function_memory_size":"?1024"?/);
    expect(log).toContain(`"function_request_id":"${requestIds.audit}"`);
    expect(log).toContain(
      '"function_arn":"arn:aws:lambda:us-east-1:012345678912:function:pool-spirit-reconciler-dev-audit"',
    );
  });

  it('answers a thrown error in the shape AWS gives: errorType, errorMessage, trace', async () => {
    // A registered cluster whose apiserver refuses connections: the pass fails after its retries.
    const table = createStateTable({ client: dynamo.client, tableName: TABLE });
    await registerCluster(table, { id: DOWN_CLUSTER, access: { kind: 'url', url: await closedPort() } }, new Date());
    const result = await fn('reconcile').invoke(reconcileRequest(DOWN_CLUSTER, POOL));
    expect(result.body).toMatchObject({
      errorType: expect.any(String),
      errorMessage: expect.stringMatching(/\S/),
      trace: expect.arrayContaining([expect.stringMatching(/\S/)]),
    });
    console.info(`lambda-rie error ${JSON.stringify({ status: result.status, body: result.body })}`);
    // A warm container: no second init phase.
    expect(fn('reconcile').initDurations()).toHaveLength(1);
  });

  it('stops a pass that overruns its timeout: no table or cluster write after the deadline', async () => {
    const short = fn('reconcile-short');
    const aboutSlowPool = (r: SeenRequest) => r.path.includes(SLOW_POOL) || r.body.includes(SLOW_POOL);
    kubeProxy.hold((r) => r.method === 'GET' && r.path.includes(SLOW_POOL));
    const result = await short.invoke(reconcileRequest(CLUSTER, SLOW_POOL));
    const deadline = result.sentAt + SHORT_TIMEOUT_S * 1000;
    const held = () => kubeProxy.seen.filter((r) => r.held && aboutSlowPool(r));
    // The invocation ended as a timeout, no later than its deadline, and its remaining time was right: it was
    // stopped the margin before the deadline (functions/common/observed-handler.ts).
    expect(JSON.stringify(result.body)).toMatch(/TimeoutError|Task timed out/);
    expect(result.answeredAt).toBeLessThanOrEqual(deadline + 100);
    expect(result.answeredAt - result.sentAt).toBeGreaterThanOrEqual(SHORT_TIMEOUT_S * 1000 - DEADLINE_MARGIN_MS);
    expect(held().length).toBeGreaterThan(0);
    // An aborted read closes its connection; the proxy hears of it a moment later. (Not yet asserted: were it
    // never aborted, what the pass writes once it is answered is the failure worth seeing.)
    await waitFor(() => held().every((r) => r.clientGone), 2_000, 'the held reads to be aborted').catch(() => false);
    // Only now does the slow read answer: a pass still running would get it and go on writing.
    kubeProxy.release();
    // The same environment runs the next invocation (an in-process pass left over would share its event loop).
    const next = await short.invoke(reconcileRequest(CLUSTER, POOL));
    expect(next.body, short.logs().slice(-4000)).not.toHaveProperty('errorType');
    const writes = [...kubeProxy.seen, ...tableProxy.seen].filter((r) => isWrite(r) && aboutSlowPool(r));
    const lastWrite = Math.max(...writes.map((r) => r.at));
    console.info(
      `lambda-rie timeout ${JSON.stringify({ sentAt: result.sentAt, deadline, answeredAt: result.answeredAt, lastWrite, heldAbortedAt: held().map((r) => r.clientGoneAt), body: result.body })}`,
    );
    // The read it was waiting on was aborted before the deadline, not answered later.
    for (const r of held()) expect(r.clientGoneAt).toBeLessThanOrEqual(deadline);
    // It had written (its lease) before time ran out, and nothing after.
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((r) => r.at > deadline)).toEqual([]);
    expect(lastWrite).toBeLessThanOrEqual(result.answeredAt);
    expect(await poolSpiritNames()).not.toContain(SLOW_POOL);
  });
});
