/**
 * The capacity probe at small scale: two real pool-spirits (the rendered pod on the built etcd in /dev/shm
 * and kube-apiserver, TLS throughout; product and upstream flags), the load phases, the patch storm with its samples, and the YurtHub-style election
 * with crashes and hangs — asserting the report's shape and invariants, not machine-dependent speeds.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createStateTable, latestCapacityProbe, recordCapacityProbe } from '../../../adapters/state-table/index.ts';
import { startPoolSpiritTarget } from '../../../dev/local/capacity/pool-spirit-target.ts';
import { ensureTable, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import {
  type CapacityProbeReport,
  DEFAULT_CAPACITY_OPTIONS,
  formatCapacityReport,
  runCapacityProbe,
} from '../../../probe/capacity/index.ts';
import { startTestCluster } from '../../support/local-cluster.ts';

const CLI = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));
const run = promisify(execFile);

const SMALL = {
  ...DEFAULT_CAPACITY_OPTIONS,
  nodes: 20,
  pods: 40,
  objectBytes: 2048,
  concurrency: 8,
  contenders: 10,
  kills: 4,
  timeScale: 10,
  patchStormSeconds: 3,
  stormConcurrency: 8,
  sampleIntervalMs: 250,
  maintenanceIntervalMs: 500,
};

describe('capacity probe, --local at small scale', () => {
  let report: CapacityProbeReport;
  beforeAll(async () => {
    report = await runCapacityProbe({ ...SMALL, target: { kind: 'local', start: startPoolSpiritTarget } });
  }, 240_000);

  it('writes and deletes every object, with sizes near the target and latency figures', () => {
    const { write, delete: del } = report.load;
    expect(write).toMatchObject({ requests: 60, errors: 0 });
    expect(del).toMatchObject({ requests: 60, errors: 0 });
    expect(write.perSecond).toBeGreaterThan(0);
    expect(write.latencyMs.p50).toBeLessThanOrEqual(write.latencyMs.p99);
    expect(write.meanSentBytes).toBeGreaterThanOrEqual(2048);
    expect(write.meanSentBytes).toBeLessThan(2048 + 400);
    expect(write.meanStoredBytes).toBeGreaterThan(write.meanSentBytes); // the API adds uid, managedFields, ...
  });

  it('reports etcd memory as RSS plus tmpfs (shared pages once), and a db that deleting does not shrink until compaction + defrag', () => {
    const { before, afterWrite, afterDelete, afterCompactAndDefrag } = report.load.etcd;
    for (const s of [before, afterWrite, afterDelete, afterCompactAndDefrag!]) {
      expect(s.rssBytes).toBeGreaterThan(0);
      expect(s.tmpfsBytes).toBeGreaterThan(64 * 2 ** 20); // the preallocated WAL segment alone
      // The mmapped db is in RSS and in tmpfs; it is counted once.
      expect(s.rssShmemBytes).toBeGreaterThanOrEqual(0);
      expect(s.memoryBytes).toBe(s.rssBytes! - s.rssShmemBytes! + s.tmpfsBytes!);
      expect(s.apiRssBytes).toBeGreaterThan(0);
    }
    // Every create reached etcd, a revision each, and the db file (which only defragmentation shrinks) did not
    // shrink. Its in-use size is not compared: etcd's periodic compaction (the rendered 1m) may free older
    // revisions between the two samples, and once did by more than the 60 objects added.
    expect(afterWrite.revision!).toBeGreaterThanOrEqual(before.revision! + report.load.write.requests);
    expect(afterWrite.dbSizeBytes!).toBeGreaterThanOrEqual(before.dbSizeBytes!);
    expect(afterDelete.dbSizeBytes!).toBeGreaterThanOrEqual(afterWrite.dbSizeBytes!);
    expect(afterCompactAndDefrag!.dbSizeBytes!).toBeLessThan(afterDelete.dbSizeBytes!);
    expect(report.target).toMatchObject({ kind: 'local', etcdFiguresFrom: 'local-process' });
  });

  it('measures both sides of the real pool-spirit over TLS: apiserver and etcd RSS and tmpfs peaks, and which apiserver flags differ', () => {
    expect(report.target.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(report.apiServerFlags.product.map((f) => f.split('=')[0])).toEqual([
      '--runtime-config',
      '--disable-admission-plugins',
      '--watch-cache-sizes',
    ]);
    expect(report.apiServerFlags.upstream).toEqual([]);
    const storms = { product: report.patchStorm.product!, upstream: report.patchStorm.upstream! };
    for (const side of ['product', 'upstream'] as const) {
      const m = report.memory[side]!;
      const samples = storms[side].storm.samples;
      expect(m.samples).toBeGreaterThan(samples.length);
      // A real kube-apiserver, not the local API: far above a node process's tens of MiB.
      expect(m.apiServerIdleRssBytes).toBeGreaterThan(100 * 2 ** 20);
      expect(m.apiServerRssBytes).toBeGreaterThanOrEqual(
        Math.max(m.apiServerIdleRssBytes!, ...samples.map((s) => s.apiRssBytes!)),
      );
      expect(m.etcdMemoryBytes).toBeGreaterThanOrEqual(Math.max(...samples.map((s) => s.memoryBytes!)));
      expect(m.etcdTmpfsBytes).toBeGreaterThan(64 * 2 ** 20);
    }
  });

  it('runs the patch storm under product and upstream settings side by side, sampling memory and db size', () => {
    const { product, upstream, target } = report.patchStorm;
    expect(target).toBeNull();
    expect(product!.settings.flags).toMatchObject({
      'quota-backend-bytes': String(512 * 2 ** 20),
      'snapshot-count': '5000',
      'max-wals': '1',
    });
    expect(upstream!.settings.flags).toMatchObject({
      'quota-backend-bytes': '0',
      'auto-compaction-retention': '0',
      'snapshot-count': '10000',
    });
    for (const side of [product!, upstream!]) {
      const s = side.storm;
      expect(s.updates).toBeGreaterThan(0);
      expect(s.errors).toBe(0);
      expect(s.memoryBasis).toBe('rss+tmpfs');
      expect(s.samples.length).toBeGreaterThanOrEqual(8);
      for (const sample of s.samples) {
        expect(sample.memoryBytes).toBeGreaterThan(0);
        expect(sample.dbSizeBytes).toBeGreaterThan(0);
      }
      expect(s.samples.at(-1)!.revision!).toBeGreaterThan(s.samples[0].revision!);
      expect(['bounded', 'growing']).toContain(s.verdict.verdict);
      expect(s.verdict.limitBytes).toBe(side.settings.memoryLimitBytes);
    }
    expect(report.verdict.memory).toBe(product!.storm.verdict.verdict);
  });

  it('elects one leader at a time through the API, fails over after each crash and hang, and reports the margin', () => {
    const e = report.leaderElection;
    const c = e.config;
    expect(e).toMatchObject({ contenders: 10, timeScale: 10, lease: 'kube-system/yurthub', overlaps: 0, errors: 0 });
    expect(c).toEqual({ leaseDurationSeconds: 1.5, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.2 });
    expect(e.firstLeader).toMatch(/^node-\d+$/);
    expect(e.firstLeaderMs).toBeGreaterThanOrEqual(0);
    expect(e.kills.map((k) => k.kind)).toEqual(['crash', 'hang', 'crash', 'hang']);
    for (const k of e.kills) {
      expect(k.newLeader).not.toBeNull();
      expect(k.newLeader).not.toBe(k.leader);
      // Nobody may take over before the lease the old leader last renewed has expired.
      expect(k.failoverMs!).toBeGreaterThanOrEqual((c.leaseDurationSeconds - c.retryPeriodSeconds) * 1000 - 50);
      expect(k.gapMs!).toBeGreaterThan(0);
    }
    expect(e.smallestMarginMs!).toBeGreaterThanOrEqual(0);
    expect(e.smallestMarginMs!).toBeLessThanOrEqual(e.smallestGapMs!);
    expect(e.theoreticalMarginMs).toBe(300);
    expect(e.leaseTransitions).toBe(e.acquisitions - 1);
    expect(e.requestsPerSecond).toBeGreaterThan(0);
    expect(e.unscaledRequestsPerSecond).toBeCloseTo(e.requestsPerSecond / 10, 0);
    expect(e.failoverMs.unscaledMax).toBe(e.failoverMs.max! * 10);
    expect(report.verdict.zeroOverlaps).toBe(true);
  });

  it('is one JSON document, prints a readable report, and is stored as a probe record', async () => {
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    const text = formatCapacityReport(report);
    expect(text).toMatch(/^Verdict: (PASS|FAIL)/m);
    expect(text).toMatch(/after deleting all/);
    expect(text).toMatch(/^Memory peaks MiB/m);
    expect(text).toMatch(/two leaders\s+0 overlaps; smallest margin/);
    const dynamo = await startLocalDynamo();
    try {
      await ensureTable(dynamo.client, 'capacity-test');
      const table = createStateTable({ client: dynamo.client, tableName: 'capacity-test' });
      await recordCapacityProbe(table, 'local', { old: true }, new Date(Date.now() - 60_000));
      await recordCapacityProbe(table, 'local', report, new Date());
      expect((await latestCapacityProbe(table, 'local', new Date()))?.report).toEqual(report);
    } finally {
      await dynamo.stop();
    }
  });
});

describe('capacity probe, --kubeconfig against an apiserver it cannot see etcd of', () => {
  it('reports memory as unavailable, elects over its own Lease and removes what it wrote', async () => {
    const tc = await startTestCluster({ crds: false });
    try {
      const report = await runCapacityProbe({
        ...SMALL,
        nodes: 5,
        pods: 5,
        contenders: 5,
        kills: 2,
        patchStormSeconds: 1,
        target: { kind: 'kubeconfig', file: tc.kubeconfigPath },
      });
      expect(report.target).toMatchObject({
        kind: 'kubeconfig',
        server: tc.cluster.url,
        etcdFiguresFrom: 'unavailable',
      });
      expect(report.load.etcd.afterWrite).toMatchObject({
        rssBytes: null,
        tmpfsBytes: null,
        memoryBytes: null,
        dbSizeBytes: null,
      });
      expect(report.patchStorm).toMatchObject({ product: null, upstream: null });
      expect(report.patchStorm.target!.storm).toMatchObject({ memoryBasis: 'none', verdict: { verdict: 'unknown' } });
      expect(report.leaderElection).toMatchObject({ lease: 'kube-system/yurthub-capacity-probe', overlaps: 0 });
      expect(report.verdict.pass).toBe(false); // memory could not be shown bounded
      const nodes = await fetch(`${tc.cluster.url}/api/v1/nodes`).then(
        (r) => r.json() as Promise<{ items: unknown[] }>,
      );
      expect(nodes.items).toEqual([]);
      const lease = await fetch(
        `${tc.cluster.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/yurthub-capacity-probe`,
      );
      expect(lease.status).toBe(404);
    } finally {
      await tc.stop();
    }
  }, 60_000);
});

describe('spiritctl probe capacity', () => {
  const cli = (...args: string[]) =>
    run(process.execPath, [CLI, 'probe', 'capacity', ...args]).catch((err) => err as { code: number; stderr: string });
  it('refuses bad flags, naming them', async () => {
    expect(await cli()).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/exactly one of --local or --kubeconfig/),
    });
    expect(await cli('--local', '--time-scale', '0')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--time-scale must be a number from 0.01/),
    });
    expect(await cli('--kubeconfig', 'k', '--peaks-out', 'p.json')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--peaks-out needs --local/),
    });
  });
});
