import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCluster, latestClusterAudit } from '../../../adapters/state-table/index.ts';
import type { Finding, FleetReport } from '../../../core/audit/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { KUBECTL } from '../../../dev/local/kube-bins/index.ts';
import { type AuditDeps, auditDeps, auditNow } from '../../../functions/audit/handler.ts';
import { chromium, haveChromium, visibleText } from '../../core/audit/chromium.ts';
import { waitFor } from '../../support/local-cluster.ts';

const run = promisify(execFile);
const NS = 'pool-spirit-system';
const MI = 2 ** 20;
const repoRoot = join(import.meta.dirname, '..', '..', '..');

/**
 * The audit against a small fleet on the built control plane (one per cluster): drift injected with kubectl while the forwarders are stopped (the
 * outage audits exist for), found by the audit with the right reason, the fixable ones repaired by the
 * reconciles it requests, through the bus and the real reconcile function.
 */
describe('fleet audit: 2 clusters × 3 pools', () => {
  let fleet: LocalFleet;
  let dir: string;
  let deps: AuditDeps;
  const kubectl = async (cluster: number, ...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', fleet.clusters[cluster].kubeconfigPath, ...args])).stdout;
  const findingsOf = async (clusterId: string): Promise<Finding[]> =>
    (await latestClusterAudit(fleet.table, clusterId, new Date()))!.findings;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-audit-'));
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 3,
      nodesPerPool: 2,
      cloudPools: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      controlPlane: 'real',
    });
    await fleet.waitConverged(60_000);
    deps = auditDeps({
      table: fleet.table,
      events: { putEvents: async (entries) => fleet.bus.putEvents(entries).Entries },
      eventBusName: fleet.eventBusName,
      logger: new Logger({ logLevel: 'ERROR' }),
    });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('finds nothing in a converged fleet', async () => {
    const { results } = await auditNow(deps, { requestedBy: 'test' });
    expect(results.map((r) => [r.record.cluster, r.record.findings, r.record.pools.length])).toEqual([
      ['cluster-01', [], 3],
      ['cluster-02', [], 3],
    ]);
    // A fixed number of list calls per cluster, whatever its pool count; the record, and on the first audit
    // the OpenYurt versions found on the registration.
    expect(results.every((r) => r.clusterReads <= 16 && r.tableWriteUnits >= 2 && r.tableWriteUnits <= 3)).toBe(true);
    const openYurt = { nodePoolApiVersion: 'apps.openyurt.io/v1beta2', nodePoolVersions: ['v1beta2', 'v1beta1'] };
    for (const r of results) {
      expect(r.record.openYurt).toEqual(openYurt);
      expect((await getCluster(fleet.table, r.record.cluster))?.openYurt).toEqual({
        ...openYurt,
        observedAt: expect.any(String),
      });
    }
    // Unchanged since: only a note naming the first run's record is written, in one write unit, and readers
    // still get the whole record.
    const again = await auditNow(deps, { requestedBy: 'test' });
    expect(again.results.map((r) => [r.tableWriteUnits, r.record.unchangedSince])).toEqual(
      results.map((r) => [1, r.record.at]),
    );
    const latest = await latestClusterAudit(fleet.table, 'cluster-01', new Date());
    expect(latest).toMatchObject({ runId: again.runId, unchangedSince: results[0].record.at, findings: [] });
    expect(latest?.pools).toHaveLength(3);
  }, 60_000);

  it('finds every injected drift with its reason, and the reconciles it requests fix the fixable ones', async () => {
    for (const c of fleet.clusters) await c.forwarder.stop(2_000);
    // Notices already on the bus (a requeued one comes back up to 10 s later) would repair the drift before the
    // audit sees it: let them all be delivered first.
    await fleet.bus.drain();
    // cluster-01: a deleted Service, an edited Deployment, a deleted PoolSpirit, an orphaned object.
    await kubectl(0, 'delete', 'service', '-n', NS, 'ps-pool-00');
    await kubectl(
      0,
      'patch',
      'deployment',
      '-n',
      NS,
      'ps-pool-01',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.example/edited:1' },
      ]),
    );
    await kubectl(0, 'delete', 'poolspirit', 'pool-02', '--wait=true');
    await kubectl(0, 'create', 'configmap', '-n', NS, 'ps-gone-bootstrap', '--from-literal=a=b');
    await kubectl(
      0,
      'label',
      'configmap',
      '-n',
      NS,
      'ps-gone-bootstrap',
      'app.kubernetes.io/managed-by=pool-spirit',
      'poolspirit.io/pool=gone',
    );
    // cluster-02: etcd near its quota (as the agent reports it) and a pod left outside its pool.
    await kubectl(
      1,
      'patch',
      'poolspirit',
      'pool-00',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { etcd: { healthy: true, alarms: [], dbSizeBytes: 470 * MI, quotaBackendBytes: 512 * MI } },
      }),
    );
    const pod = JSON.parse(await kubectl(1, 'get', 'pods', '-n', NS, '-l', 'poolspirit.io/pool=pool-01', '-o', 'json'))
      .items[0];
    await kubectl(1, 'label', 'node', pod.spec.nodeName, 'apps.openyurt.io/nodepool=pool-02', '--overwrite');

    const reconcilesBefore = fleet.reconcile.stats.invocations;
    await auditNow(deps, { requestedBy: 'test' });
    const one = await findingsOf('cluster-01');
    const two = await findingsOf('cluster-02');
    const brief = (fs: Finding[]) => fs.map((f) => `${f.kind} ${f.pool} ${f.fixable ? 'fixable' : 'manual'}`);
    expect(brief(one)).toEqual(
      expect.arrayContaining([
        'missing-pool-spirit pool-02 fixable',
        'spec-drift pool-00 fixable',
        'spec-drift pool-01 fixable',
        'orphan gone manual',
      ]),
    );
    expect(one.find((f) => f.kind === 'spec-drift' && f.object === `Service ${NS}/ps-pool-00`)?.reason).toMatch(
      /is missing \(deleted\?\)/,
    );
    expect(one.find((f) => f.kind === 'spec-drift' && f.object === `Deployment ${NS}/ps-pool-01`)?.reason).toMatch(
      /differs from the rendered spec at \.spec\.template\.spec\.containers\[name=[\w-]+\]\.image \(edited by kubectl-patch\)/,
    );
    expect(one.find((f) => f.kind === 'missing-pool-spirit')?.reason).toMatch(
      /edge NodePool pool-02 has no PoolSpirit/,
    );
    expect(one.find((f) => f.kind === 'orphan')?.reason).toMatch(
      /ConfigMap pool-spirit-system\/ps-gone-bootstrap belongs to pool gone, which has no NodePool/,
    );
    expect(brief(two)).toEqual(expect.arrayContaining(['etcd-near-quota pool-00 manual', 'misplaced pool-01 manual']));
    expect(two.find((f) => f.kind === 'etcd-near-quota')?.reason).toMatch(/470Mi, 92% of its 512Mi quota/);
    expect(two.find((f) => f.kind === 'misplaced')?.reason).toMatch(
      new RegExp(`runs on node ${pod.spec.nodeName} of pool pool-02, outside pool pool-01`),
    );
    expect((await latestClusterAudit(fleet.table, 'cluster-01', new Date()))!.requested).toEqual([
      'pool-00',
      'pool-01',
      'pool-02',
    ]);

    // The requested reconciles run through the bus and repair what they can.
    await waitFor(
      () => fleet.reconcile.stats.invocations >= reconcilesBefore + 3,
      30_000,
      'the three requested reconciles',
    );
    await fleet.bus.drain();
    await waitFor(
      async () => {
        await auditNow(deps, { clusterIds: ['cluster-01'], requestedBy: 'test' });
        await fleet.bus.drain();
        const left = await findingsOf('cluster-01');
        return left.every((f) => !f.fixable || f.kind === 'unready') && left;
      },
      45_000,
      'the fixable findings of cluster-01 repaired',
    );
    expect(await kubectl(0, 'get', 'service', '-n', NS, 'ps-pool-00', '-o', 'name')).toMatch(/service\/ps-pool-00/);
    expect(
      await kubectl(
        0,
        'get',
        'deployment',
        '-n',
        NS,
        'ps-pool-01',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ),
    ).not.toContain('registry.example/edited');
    expect(await kubectl(0, 'get', 'poolspirit', 'pool-02', '-o', 'name')).toMatch(/pool-02/);
    // What needs a person is still reported.
    expect((await findingsOf('cluster-01')).map((f) => f.kind)).toContain('orphan');
    expect(fleet.bus.deadLetters()).toEqual([]);
  }, 120_000);

  it('the scheduled run fans out one audit request per cluster through the bus', async () => {
    const before = fleet.audit.stats.invocations;
    const out: any = await fleet.audit.invoke({
      version: '0',
      id: 'tick-1',
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'local',
      resources: ['arn:aws:events:local:000000000000:rule/audit-schedule-1'],
      detail: {},
    });
    expect(out).toMatchObject({
      kind: 'fan-out',
      runId: 'tick-1',
      clusters: ['cluster-01', 'cluster-02'],
      putEventsCalls: 1,
    });
    await waitFor(() => fleet.audit.stats.invocations >= before + 3, 30_000, 'one audit per cluster');
    await fleet.bus.drain();
    for (const id of ['cluster-01', 'cluster-02'])
      expect((await latestClusterAudit(fleet.table, id, new Date()))!.runId).toBe('tick-1');
    expect(fleet.audit.stats.errors).toBe(0);
  }, 60_000);

  it('spiritctl audit prints the fleet report as JSON and writes the HTML page Chromium shows', async () => {
    const html = join(dir, 'fleet.html');
    const { stdout } = await run(
      process.execPath,
      [
        join(repoRoot, 'cli', 'main.ts'),
        'audit',
        '--json',
        '--html',
        html,
        '--dynamo-endpoint',
        fleet.dynamo.endpoint,
        '--bus-endpoint',
        fleet.bus.endpoint,
        '--event-bus',
        fleet.eventBusName,
      ],
      { cwd: repoRoot },
    );
    const report = JSON.parse(stdout) as FleetReport;
    expect(report.clusters.map((c) => c.id)).toEqual(['cluster-01', 'cluster-02']);
    const unhealthy = report.summary.unhealthyPools;
    expect(unhealthy).toBeGreaterThanOrEqual(2); // cluster-02: pool-00 (etcd) and pool-01 (misplaced)
    expect(report.clusters[1].findings.map((f) => f.kind)).toEqual(
      expect.arrayContaining(['etcd-near-quota', 'misplaced']),
    );
    // Three audits of cluster-02 so far: the charts have history.
    expect(
      report.clusters[1].history.etcdBytes.find((s) => s.pool === 'pool-00')!.points.length,
    ).toBeGreaterThanOrEqual(3);
    if (!haveChromium) return;
    expect((await readFile(html, 'utf8')).length).toBeGreaterThan(1000);
    const dom = await chromium(html, { dumpDom: true });
    const text = visibleText(dom);
    expect(text).toContain('cluster-01');
    expect(text).toContain('cluster-02');
    expect(text).toMatch(/etcd database is 470Mi, 92% of its 512Mi quota/);
    expect(dom).toContain(`id="pools-unhealthy">${unhealthy}<`);
  }, 90_000);
});
