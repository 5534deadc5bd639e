/**
 * The probe function end to end: the built control plane with PoolSpirits whose status.leader the agent would have
 * written, dynalite with the state table and the cluster registered, the real handler (the schedule's fan-out
 * through the local bus with serverless.yml's probe rule); then the CLI reads what it stored.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { HttpMethod } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import {
  clusterProbes,
  createStateTable,
  keys,
  latestLeaderProbes,
  latestProbeRun,
  registerCluster,
  TTL_ATTRIBUTE,
} from '../../../adapters/state-table/index.ts';
import { getItem } from '../../../adapters/state-table/table.ts';
import { startLocalBus } from '../../../dev/local/bus/index.ts';
import { loadRules } from '../../../dev/local/bus/rules-from-serverless.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import type { EventSender } from '../../../functions/common/send-events.ts';
import { createProbeHandler, type ProbeInvocationResult } from '../../../functions/probe/handler.ts';
import type { TestClusterAccess } from '../../support/local-cluster.ts';
import { startRealTestCluster } from '../../support/real-cluster.ts';

const TABLE = 'probe-test-state';
const CLI = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));
const run = promisify(execFile);
const context = {} as Context;

let dynamo: LocalDynamo;
let table: StateTable;
let tc: TestClusterAccess;
// Near real time: the CLI reads with its own clock and must not see the records as expired.
let clockMs = Date.now() - 10 * 60_000;
const clock = () => new Date(clockMs);
const at = (secondsAgo: number) => new Date(clockMs - secondsAgo * 1000).toISOString();
const metricsOut: string[] = [];

const api = (method: HttpMethod, path: string, body?: unknown) =>
  tc.api.requestJson<Record<string, unknown>>(method, path, body === undefined ? {} : { body });

const PS = '/apis/poolspirit.io/v1alpha1/poolspirits';
async function setLeader(name: string, leader: Record<string, unknown> | undefined) {
  const live = await api(HttpMethod.GET, `${PS}/${name}`);
  await api(HttpMethod.PUT, `${PS}/${name}/status`, { ...live, status: leader ? { leader } : {} });
}

function handler(bus?: { events: EventSender; eventBusName: string }) {
  const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const metrics = new Metrics({ namespace: 'PoolSpiritTest', serviceName: 'probe-test', logger: silent });
  Object.assign(metrics, { console: { log: (line: string) => metricsOut.push(line) } });
  return createProbeHandler({
    table,
    clock,
    logger: new Logger({ serviceName: 'probe-test', logLevel: 'SILENT' }),
    metrics,
    ...bus,
  });
}

function probed(result: ProbeInvocationResult) {
  if (result.kind !== 'cluster') throw new Error(`expected a cluster probe, got a ${result.kind}`);
  return result;
}

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, TABLE);
  table = createStateTable({ client: dynamo.client, tableName: TABLE });
  tc = await startRealTestCluster({ name: 'probe', controllers: false });
  await registerCluster(table, { id: 'c1', access: { kind: 'kubeconfig-file', path: tc.kubeconfigPath } }, clock());
  for (const pool of ['hangzhou', 'shanghai', 'beijing']) {
    await api(HttpMethod.POST, PS, {
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: pool },
      spec: { nodePool: pool },
    });
  }
});

afterAll(async () => {
  await tc?.stop();
  await dynamo?.stop();
});

describe('probe function', () => {
  it('observes, classifies and records every pool of a named cluster', async () => {
    await setLeader('hangzhou', { holder: 'edge-1', renewTime: at(3), transitions: 1 });
    await setLeader('shanghai', { holder: 'edge-7', renewTime: at(300), transitions: 0 });
    // beijing: the agent has reported nothing yet.
    const result = probed(await handler()({ clusterId: 'c1' }, context));
    const byPool = Object.fromEntries(result.clusters[0].pools.map((p) => [p.nodePool, p]));
    expect(byPool.hangzhou).toMatchObject({ state: 'healthy', holder: 'edge-1', renewAgeSeconds: 3 });
    expect(byPool.shanghai).toMatchObject({ state: 'stale', holder: 'edge-7', renewAgeSeconds: 300 });
    expect(byPool.beijing).toMatchObject({ state: 'healthy', noLeaderSeconds: 0 }); // an election may be under way
    expect(result.counts).toEqual({ healthy: 2, 'no-leader': 0, stale: 1, flapping: 0 });
    expect(metricsOut.join('\n')).toMatch(/LeaderPools_stale/);

    const item = await getItem(table, keys.probeLatest('c1', 'hangzhou'));
    expect(item?.[TTL_ATTRIBUTE]).toBe(Math.ceil((clockMs + 7 * 24 * 3600 * 1000) / 1000));
  });

  it('a scheduled run fans out one request per registered cluster, each probed on its own; history turns a missing leader into no-leader and churn into flapping', async () => {
    await registerCluster(table, { id: 'c2', access: { kind: 'url', url: 'http://127.0.0.1:1' } }, clock());
    clockMs += 5 * 60_000;
    await setLeader('hangzhou', { holder: 'edge-2', renewTime: at(1), transitions: 9 });
    await setLeader('shanghai', { holder: 'edge-7', renewTime: at(2), transitions: 0 });
    // The probe's own pattern rules from serverless.yml (not its schedule: the test fires the tick itself).
    const rules = loadRules(join(import.meta.dirname, '..', '..', '..', 'serverless.yml')).filter(
      (r) => r.target === 'probe' && r.pattern !== undefined,
    );
    const eventBusName = rules[0]!.eventBus!;
    const results: ProbeInvocationResult[] = [];
    const failures: string[] = [];
    let probe: ReturnType<typeof handler> | undefined;
    const bus = await startLocalBus({
      rules,
      targets: {
        probe: async (event) => {
          try {
            results.push(await probe!(event, context));
          } catch (err) {
            failures.push((err as Error).message);
            throw err; // the bus retries it, then dead-letters it
          }
        },
      },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    try {
      probe = handler({
        events: { putEvents: async (entries) => bus.putEvents(entries).Entries },
        eventBusName,
      });
      const scheduled = {
        version: '0',
        id: 'tick-1',
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '000000000000',
        time: clock().toISOString(),
        region: 'local',
        resources: ['arn:aws:events:local:000000000000:rule/probe-tick'],
        detail: {},
      };
      expect(await probe(scheduled, context)).toEqual({
        kind: 'fan-out',
        runId: 'tick-1',
        clusters: ['c1', 'c2'],
        putEventsCalls: 1,
      });
      await bus.drain();
      // c2 is unreachable: its request alone fails, is retried by the bus and dead-lettered; c1 is recorded.
      const [deadLetter, ...moreDeadLetters] = bus.deadLetters();
      expect(moreDeadLetters).toEqual([]);
      expect(deadLetter).toMatchObject({ target: 'probe', reason: 'retries-exhausted', attempts: 11 });
      expect(deadLetter!.event.detail).toEqual({ clusterId: 'c2', runId: 'tick-1', requestedBy: 'schedule' });
      expect(failures).toHaveLength(11);
      expect(failures.every((m) => m.startsWith('probe of cluster c2 failed: '))).toBe(true);
    } finally {
      await bus.stop();
    }
    expect(results.map((r) => r.kind)).toEqual(['cluster']);
    const { clusters } = probed(results[0]!);
    expect(clusters.map((c) => c.clusterId)).toEqual(['c1']);
    const byPool = Object.fromEntries(clusters[0]!.pools.map((p) => [p.nodePool, p]));
    expect(byPool.hangzhou).toMatchObject({ state: 'flapping', transitionsLastHour: 8 });
    expect(byPool.shanghai).toMatchObject({ state: 'healthy' });
    expect(byPool.beijing).toMatchObject({ state: 'no-leader', noLeaderSeconds: 300 });

    const history = await clusterProbes(table, 'c1', new Date(clockMs - 3600_000), clock());
    expect(history.filter((p) => p.pool === 'hangzhou').map((p) => p.record.holder)).toEqual(['edge-1', 'edge-2']);
    const latest = await latestLeaderProbes(table, 'c1', clock());
    expect(latest.map((r) => [r.nodePool, r.classification.state])).toEqual([
      ['beijing', 'no-leader'],
      ['hangzhou', 'flapping'],
      ['shanghai', 'healthy'],
    ]);
    // Expired records are absent even before DynamoDB's TTL deletes them.
    expect(await latestLeaderProbes(table, 'c1', new Date(clockMs + 8 * 24 * 3600_000))).toEqual([]);
  });

  it('refuses bad input with the field named, and fails a request for an unknown cluster', async () => {
    await expect(handler()({ clusterId: 'Not_A_Label' }, context)).rejects.toThrow(/clusterId/);
    await expect(handler()({ 'detail-type': 'Something Else' }, context)).rejects.toThrow(/detail-type/);
    await expect(handler()({ clusterId: 'c9' }, context)).rejects.toThrow(/c9 is not registered/);
  });

  it('spiritctl probe leaders prints the latest classification per pool from the table', async () => {
    const args = [CLI, 'probe', 'leaders', '--dynamo-endpoint', dynamo.endpoint, '--table', TABLE, '--cluster', 'c1'];
    const json = await run(process.execPath, [...args, '--json']).catch(
      (err) => err as { stdout: string; code: number },
    );
    expect((json as { code?: number }).code).toBe(3); // not every pool is healthy
    const doc = JSON.parse(json.stdout) as { pools: Array<{ nodePool: string; classification: { state: string } }> };
    expect(doc.pools.map((p) => p.classification.state)).toEqual(['no-leader', 'flapping', 'healthy']);
    const text = await run(process.execPath, args).catch((err) => err as { stdout: string });
    expect(text.stdout).toMatch(/^CLUSTER\s+POOL\s+STATE\s+LEADER/m);
    expect(text.stdout).toMatch(/c1\s+beijing\s+no-leader\s+–/);
    const bad = await run(process.execPath, [CLI, 'probe', 'leaders', '--dynamo-endpoint', dynamo.endpoint]).catch(
      (err) => err as { stderr: string; code: number },
    );
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/there is no table "pool-spirit-local-state" at .*--table NAME/),
    });
  });

  it('a probe that sees nothing new writes only its run record; a day later the heartbeat writes every pool', async () => {
    const historyNow = async () =>
      (await clusterProbes(table, 'c1', new Date(clockMs - 30 * 24 * 3600_000), clock())).length;
    const before = await historyNow();
    clockMs += 60_000;
    // The leaders renewed (a new renewTime every probe): nothing classification depends on changed.
    await setLeader('hangzhou', { holder: 'edge-2', renewTime: at(1), transitions: 9 });
    await setLeader('shanghai', { holder: 'edge-7', renewTime: at(2), transitions: 0 });
    const quiet = probed(await handler()({ clusterId: 'c1' }, context));
    expect(Object.fromEntries(quiet.clusters[0].pools.map((p) => [p.nodePool, p.state]))).toEqual({
      hangzhou: 'flapping',
      shanghai: 'healthy',
      beijing: 'no-leader',
    });
    expect(await historyNow()).toBe(before);
    expect(await latestProbeRun(table, 'c1', clock())).toMatchObject({ probedAt: clock().toISOString(), written: 0 });

    clockMs += 24 * 3600_000;
    await setLeader('hangzhou', { holder: 'edge-2', renewTime: at(1), transitions: 9 });
    await setLeader('shanghai', { holder: 'edge-7', renewTime: at(2), transitions: 0 });
    await handler()({ clusterId: 'c1' }, context);
    expect(await latestProbeRun(table, 'c1', clock())).toMatchObject({ written: 3 });
    expect(await historyNow()).toBe(before + 3);
    const latest = await latestLeaderProbes(table, 'c1', clock());
    const hangzhou = latest.find((r) => r.nodePool === 'hangzhou');
    // The hour's changes have aged out: healthy again, and the record keeps only the last change before it.
    expect(hangzhou?.classification.state).toBe('healthy');
    expect(hangzhou?.recent.map((o) => o.holder)).toEqual(['edge-2', 'edge-2']);
  });
});
