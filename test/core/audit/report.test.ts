import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportText } from '../../../cli/commands/audit.ts';
import {
  type AuditRecord,
  auditCluster,
  buildFleetReport,
  type FleetReport,
  renderFleetReportHtml,
} from '../../../core/audit/index.ts';
import { chromium, haveChromium, visibleText } from './chromium.ts';
import { healthyCluster, NOW } from './world.ts';

const MI = 2 ** 20;
const at = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000).toISOString();

/** Six audits of two clusters: edge-eu-1 drifts and its leader flaps; edge-us-1 stays healthy. */
async function records(): Promise<{ eu: AuditRecord[]; us: AuditRecord[] }> {
  const eu: AuditRecord[] = [];
  const us: AuditRecord[] = [];
  for (let i = 5; i >= 0; i--) {
    const obs = await healthyCluster();
    const hz = obs.poolSpirits[0].status as any;
    hz.leader.transitions = 2 + (5 - i) * 2;
    hz.etcd.dbSizeBytes = (100 + (5 - i) * 70) * MI;
    (obs.poolSpirits[1].status as any).etcd.dbSizeBytes = (40 + (5 - i) * 3) * MI;
    if (i === 0) obs.owned = obs.owned.filter((o) => !(o.kind === 'Service' && o.metadata.name === 'ps-hangzhou'));
    const a = auditCluster(obs, { now: NOW });
    eu.push({
      cluster: 'edge-eu-1',
      runId: `run-${i}`,
      at: at(i * 10),
      findings: a.findings,
      pools: a.pools,
      requested: i === 0 ? ['hangzhou'] : [],
    });
    const healthy = auditCluster({ ...(await healthyCluster()), clusterId: 'edge-us-1' }, { now: NOW });
    us.push({
      cluster: 'edge-us-1',
      runId: `run-${i}`,
      at: at(i * 10),
      findings: healthy.findings,
      pools: healthy.pools,
      requested: [],
    });
  }
  return { eu, us };
}

describe('fleet report', () => {
  let report: FleetReport;
  let dir: string;

  beforeAll(async () => {
    const { eu, us } = await records();
    report = buildFleetReport(
      [
        { id: 'edge-us-1', labels: { region: 'us-east-1' }, latest: us.at(-1), history: us },
        { id: 'edge-eu-1', labels: { region: 'eu-west-1', 'rollout-group': 'canary' }, latest: eu.at(-1), history: eu },
        { id: 'edge-ap-1', labels: {} },
      ],
      NOW,
    );
    dir = await mkdtemp(join(tmpdir(), 'ps-report-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('summarises the fleet in JSON: health per cluster and pool, findings, history for the charts', () => {
    expect(report.summary).toMatchObject({
      clusters: 3,
      clustersAudited: 2,
      clustersUnhealthy: 2, // edge-eu-1 drifted, edge-ap-1 never audited
      pools: 4,
      healthyPools: 3,
      unhealthyPools: 1,
      reconcilesRequested: 1,
    });
    const eu = report.clusters.find((c) => c.id === 'edge-eu-1')!;
    expect(eu.health).toBe('degraded');
    expect(eu.pools.map((p) => [p.pool, p.health])).toEqual([
      ['hangzhou', 'degraded'],
      ['shanghai', 'healthy'],
    ]);
    expect(eu.findings.map((f) => f.kind)).toEqual(['etcd-near-quota', 'spec-drift']);
    expect(eu.findings.find((f) => f.kind === 'flapping-leader')).toBeUndefined(); // the pure audit got no history here
    expect(eu.history.leaderTransitions[0]).toMatchObject({ pool: 'hangzhou' });
    expect(eu.history.leaderTransitions[0].points.map((p) => p.value)).toEqual([2, 4, 6, 8, 10, 12]);
    expect(eu.history.etcdBytes[0].points.at(-1)!.value).toBe(450 * MI);
    expect(eu.history.etcdQuotaBytes).toBe(512 * MI);
    expect(report.clusters.find((c) => c.id === 'edge-ap-1')!.health).toBe('unknown');
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('renders one self-contained HTML page that Chromium shows with names, findings and counts', {
    skip: !haveChromium,
    timeout: 60_000,
  }, async () => {
    const html = renderFleetReportHtml(report);
    expect(html).not.toMatch(/<script|<link|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    const file = join(dir, 'fleet.html');
    await writeFile(file, html);
    const dom = await chromium(file, { dumpDom: true });
    const text = visibleText(dom);
    for (const cluster of ['edge-eu-1', 'edge-us-1', 'edge-ap-1']) expect(text).toContain(cluster);
    expect(dom).toMatch(/id="pools-unhealthy">1</);
    expect(text).toContain('Service pool-spirit-system/ps-hangzhou is missing (deleted?); a reconcile recreates it');
    expect(text).toContain('reconcile requested');
    expect(text).toContain('Not audited');
    // Health is told in words and symbols, not colour alone.
    expect(text).toMatch(/▲ hangzhou Degraded/);
    expect(text).toMatch(/✔ Healthy/);
    // Both charts per audited cluster, with the pools named in the legend and the quota line.
    expect((dom.match(/<svg /g) ?? []).length).toBe(6);
    expect(text).toContain('Leader transitions (cumulative)');
    expect(text).toContain('quota 512Mi');
    expect(text).toContain('no history yet');
  });

  // For a person reviewing the page (slow on a busy machine, so only on request): AUDIT_SCREENSHOT_DIR=/tmp/x.
  it('writes a screenshot a person can look at', {
    skip: !haveChromium || !process.env.AUDIT_SCREENSHOT_DIR,
    timeout: 60_000,
  }, async () => {
    const png = join(process.env.AUDIT_SCREENSHOT_DIR!, 'fleet-report.png');
    await writeFile(join(dir, 'fleet.html'), renderFleetReportHtml(report));
    await chromium(join(dir, 'fleet.html'), { screenshot: png, width: 1280, height: 1600 });
    const { stat } = await import('node:fs/promises');
    expect((await stat(png)).size).toBeGreaterThan(10_000);
  });

  it('prints a terminal summary: one line per cluster, then each finding with what fixes it', () => {
    const text = reportText(report);
    expect(text).toMatch(/^fleet: 3 cluster\(s\), 4 pool\(s\): 3 healthy, 1 degraded, 0 critical\n/);
    expect(text).toMatch(/edge-ap-1\s+not audited\s+0\/0\s+0\s+-/);
    expect(text).toMatch(/edge-eu-1\s+DEGRADED\s+1\/2\s+2/);
    expect(text).toMatch(
      /WARNING\s+spec-drift\s+hangzhou\s+Service pool-spirit-system\/ps-hangzhou is missing .* \[reconcile requested\]/,
    );
  });

  it('escapes names that come from clusters', () => {
    const evil = buildFleetReport([{ id: '<img src=x onerror=alert(1)>', labels: { a: '"><b>' } }], NOW);
    const html = renderFleetReportHtml(evil);
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
