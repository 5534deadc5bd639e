import { describe, expect, it } from 'vitest';
import { auditCluster, type ClusterObservation, type Finding } from '../../../core/audit/index.ts';
import { CLUSTER, DAY, healthyCluster, NOW, node, pod, poolSpirit } from './world.ts';

const audit = (obs: ClusterObservation) => auditCluster(obs, { now: NOW });
const spiritOf = (obs: ClusterObservation, pool: string) => obs.poolSpirits.find((s) => s.metadata.name === pool)!;
const statusOf = (obs: ClusterObservation, pool: string) => spiritOf(obs, pool).status as Record<string, any>;
const ownedOf = (obs: ClusterObservation, kind: string, pool = 'hangzhou') =>
  obs.owned.find((o) => o.kind === kind && o.metadata.labels?.['poolspirit.io/pool'] === pool)!;

function only(findings: Finding[], kind: Finding['kind']): Finding {
  const matching = findings.filter((f) => f.kind === kind);
  expect(matching, `findings: ${JSON.stringify(findings, null, 1)}`).toHaveLength(1);
  return matching[0];
}

describe('auditCluster on a healthy cluster', () => {
  it('finds nothing, and reports every edge pool healthy (the Cloud pool is not audited)', async () => {
    const result = audit(await healthyCluster());
    expect(result.findings).toEqual([]);
    expect(result.pools.map((p) => [p.pool, p.health, p.available])).toEqual([
      ['hangzhou', 'healthy', true],
      ['shanghai', 'healthy', true],
    ]);
    expect(result.pools[0].etcd?.dbSizeBytes).toBe(40 * 2 ** 20);
    expect(result.pools[0].leader?.transitions).toBe(2);
  });
});

describe('auditCluster finds each injected drift with its reason', () => {
  it('missing pool-spirit: an edge pool without PoolSpirit (critical, fixable)', async () => {
    const obs = await healthyCluster();
    obs.poolSpirits = obs.poolSpirits.filter((s) => s.metadata.name !== 'shanghai');
    const f = only(audit(obs).findings, 'missing-pool-spirit');
    expect(f).toMatchObject({ severity: 'critical', pool: 'shanghai', cluster: CLUSTER, fixable: true });
    expect(f.reason).toMatch(/edge NodePool shanghai has no PoolSpirit/);
    expect(audit(obs).pools.find((p) => p.pool === 'shanghai')!.health).toBe('critical');
  });

  it('an opted-out pool without PoolSpirit is not missing one', async () => {
    const obs = await healthyCluster();
    obs.poolSpirits = obs.poolSpirits.filter((s) => s.metadata.name !== 'shanghai');
    obs.nodePools.find((p) => p.metadata.name === 'shanghai')!.metadata.annotations = {
      'poolspirit.io/disabled': 'true',
    };
    delete obs.desired.shanghai;
    obs.owned = obs.owned.filter((o) => o.metadata.labels?.['poolspirit.io/pool'] !== 'shanghai');
    obs.pods = obs.pods.filter((p) => p.metadata.labels?.['poolspirit.io/pool'] !== 'shanghai');
    expect(audit(obs).findings).toEqual([]);
  });

  it('unready: not Available for a short while (warning, left to converge)', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').conditions = [
      {
        type: 'Available',
        status: 'False',
        reason: 'WorkloadNotReady',
        message: 'the pool-spirit pod is not ready',
        lastTransitionTime: new Date(NOW.getTime() - 60_000).toISOString(),
      },
    ];
    const f = only(audit(obs).findings, 'unready');
    expect(f).toMatchObject({ severity: 'warning', pool: 'hangzhou', fixable: false });
    expect(f.reason).toBe('not Available yet (1m): WorkloadNotReady: the pool-spirit pod is not ready');
  });

  it('stuck: not Available for longer than the threshold (critical, fixable)', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').conditions = [
      {
        type: 'Available',
        status: 'False',
        reason: 'WorkloadNotReady',
        message: 'the pool-spirit pod is not ready',
        lastTransitionTime: new Date(NOW.getTime() - 2 * 3600_000).toISOString(),
      },
    ];
    const f = only(audit(obs).findings, 'stuck');
    expect(f).toMatchObject({ severity: 'critical', fixable: true });
    expect(f.reason).toMatch(/^not Available for 2h \(over 15m\): WorkloadNotReady/);
  });

  it('invalid spec: critical and left to a person', async () => {
    const obs = await healthyCluster();
    Object.assign(statusOf(obs, 'hangzhou'), {
      phase: 'Invalid',
      conditions: [
        {
          type: 'Available',
          status: 'False',
          reason: 'Invalid',
          message: 'invalid spec: spec.etcd.extraArgs.data-dir: owned',
          lastTransitionTime: NOW.toISOString(),
        },
      ],
    });
    const f = only(audit(obs).findings, 'unready');
    expect(f).toMatchObject({ severity: 'critical', fixable: false });
    expect(f.reason).toMatch(/invalid spec: .*data-dir/);
  });

  it('unreconciled: a spec generation the reconciler has not observed (fixable)', async () => {
    const obs = await healthyCluster();
    spiritOf(obs, 'hangzhou').metadata.generation = 3;
    const f = only(audit(obs).findings, 'unreconciled');
    expect(f.reason).toMatch(/generation 3 has not been reconciled yet \(status reflects generation 1\)/);
    expect(f.fixable).toBe(true);
  });

  it('orphan: a PoolSpirit whose NodePool is gone, and an owned object of a gone pool', async () => {
    const obs = await healthyCluster();
    obs.poolSpirits.push(poolSpirit('wuhan'));
    obs.owned.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'ps-chengdu-bootstrap',
        namespace: 'pool-spirit-system',
        labels: { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': 'chengdu' },
      },
    });
    const orphans = audit(obs).findings.filter((f) => f.kind === 'orphan');
    expect(orphans.map((f) => [f.pool, f.fixable, f.object])).toEqual([
      ['chengdu', false, 'ConfigMap pool-spirit-system/ps-chengdu-bootstrap'],
      ['wuhan', false, 'PoolSpirit wuhan'],
    ]);
    expect(orphans[1].reason).toMatch(/serves NodePool wuhan, which does not exist/);
    expect(orphans[0].reason).toMatch(/belongs to pool chengdu, which has no NodePool/);
  });

  it('orphan: a PoolSpirit of a pool that became a Cloud pool (a reconcile removes it)', async () => {
    const obs = await healthyCluster();
    obs.nodePools.find((p) => p.metadata.name === 'shanghai')!.spec = { type: 'Cloud' };
    const f = only(audit(obs).findings, 'orphan');
    expect(f).toMatchObject({ pool: 'shanghai', fixable: true });
    expect(f.reason).toMatch(/no longer wants a pool-spirit \(NotEdge/);
  });

  it('no leader (warning, needs a person)', async () => {
    const obs = await healthyCluster();
    delete statusOf(obs, 'hangzhou').leader;
    const f = only(audit(obs).findings, 'no-leader');
    expect(f).toMatchObject({ severity: 'warning', fixable: false });
    expect(f.reason).toMatch(/no YurtHub holds the kube-system\/yurthub leader Lease/);
  });

  it('stale leader: last renewal older than the threshold', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').leader.renewTime = new Date(NOW.getTime() - 20 * 60_000).toISOString();
    expect(only(audit(obs).findings, 'stale-leader').reason).toBe(
      'leader hangzhou-node-0 last renewed 20m ago (stale after 5m)',
    );
  });

  it('flapping leader: transitions within the window from earlier samples', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').leader.transitions = 9;
    obs.leaderHistory = {
      hangzhou: [
        { at: new Date(NOW.getTime() - 3 * 3600_000).toISOString(), transitions: 0 },
        { at: new Date(NOW.getTime() - 40 * 60_000).toISOString(), transitions: 4 },
      ],
      shanghai: [{ at: new Date(NOW.getTime() - 40 * 60_000).toISOString(), transitions: 1 }],
    };
    const f = only(audit(obs).findings, 'flapping-leader');
    expect(f.pool).toBe('hangzhou');
    expect(f.reason).toMatch(/^leader changed 5 times in the last 1h/);
  });

  it('leader verdict from a probe record', async () => {
    const obs = await healthyCluster();
    obs.probes = { shanghai: { observedAt: NOW.toISOString(), classification: 'flapping', holder: 'shanghai-node-1' } };
    const f = only(audit(obs).findings, 'flapping-leader');
    expect(f.reason).toMatch(/leader probe at .* classified the pool as flapping \(holder shanghai-node-1\)/);
  });

  it('etcd near quota (warning) and alarming (critical)', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').etcd.dbSizeBytes = 450 * 2 ** 20;
    statusOf(obs, 'shanghai').etcd.alarms = ['NOSPACE'];
    const findings = audit(obs).findings;
    expect(only(findings, 'etcd-near-quota')).toMatchObject({
      pool: 'hangzhou',
      severity: 'warning',
      reason: expect.stringMatching(/450Mi, 88% of its 512Mi quota/),
    });
    expect(only(findings, 'etcd-alarm')).toMatchObject({
      pool: 'shanghai',
      severity: 'critical',
      reason: expect.stringMatching(/alarm NOSPACE: it refuses every write/),
    });
  });

  it('etcd reported unhealthy (critical)', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').etcd.healthy = false;
    expect(only(audit(obs).findings, 'etcd-alarm').reason).toBe('the agent reports etcd unhealthy');
  });

  it('certificates near expiry (warning within 30 days, critical within 7; fixable)', async () => {
    const obs = await healthyCluster();
    statusOf(obs, 'hangzhou').certificates.notAfter = new Date(NOW.getTime() + 20 * DAY).toISOString();
    statusOf(obs, 'shanghai').certificates.notAfter = new Date(NOW.getTime() - DAY).toISOString();
    const certs = audit(obs).findings.filter((f) => f.kind === 'certificates-expiring');
    expect(certs.map((f) => [f.pool, f.severity, f.fixable])).toEqual([
      ['shanghai', 'critical', true],
      ['hangzhou', 'warning', true],
    ]);
    expect(certs[1].reason).toMatch(/leaf certificates expire at .* \(in 20 days\)/);
    expect(certs[0].reason).toMatch(/leaf certificates expired at/);
  });

  it('spec drift: an owned Service deleted', async () => {
    const obs = await healthyCluster();
    obs.owned = obs.owned.filter(
      (o) => !(o.kind === 'Service' && o.metadata.labels?.['poolspirit.io/pool'] === 'hangzhou'),
    );
    const f = only(audit(obs).findings, 'spec-drift');
    expect(f).toMatchObject({ pool: 'hangzhou', fixable: true, object: 'Service pool-spirit-system/ps-hangzhou' });
    expect(f.reason).toMatch(/is missing \(deleted\?\)/);
  });

  it('spec drift: an owned Deployment edited, naming the fields and the editor (never values)', async () => {
    const obs = await healthyCluster();
    const deployment = ownedOf(obs, 'Deployment') as any;
    deployment.spec.template.spec.containers[0].image = 'evil.example/apiserver:latest';
    deployment.metadata.managedFields = [
      { manager: 'pool-spirit-reconciler', operation: 'Apply', time: '2026-01-14T00:00:00Z' },
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-01-15T11:00:00Z' },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', time: '2026-01-15T11:00:00Z' },
    ];
    const f = only(audit(obs).findings, 'spec-drift');
    expect(f.object).toBe('Deployment pool-spirit-system/ps-hangzhou');
    expect(f.reason).toMatch(
      /differs from the rendered spec at \.spec\.template\.spec\.containers\[name=kube-apiserver\]\.image \(edited by kubectl-edit\)/,
    );
    expect(f.reason).not.toContain('evil.example');
  });

  it('spec drift is not judged for a paused pool', async () => {
    const obs = await healthyCluster();
    obs.owned = obs.owned.filter(
      (o) => !(o.kind === 'Service' && o.metadata.labels?.['poolspirit.io/pool'] === 'hangzhou'),
    );
    (spiritOf(obs, 'hangzhou').spec as any).paused = true;
    Object.assign(statusOf(obs, 'hangzhou'), { phase: 'Paused' });
    const findings = audit(obs).findings;
    expect(findings.filter((f) => f.kind === 'spec-drift')).toEqual([]);
    expect(only(findings, 'unready')).toMatchObject({ severity: 'info', reason: expect.stringMatching(/paused/) });
  });

  it('misplaced: the pool-spirit pod runs on a node of another pool (critical)', async () => {
    const obs = await healthyCluster();
    obs.pods = [pod('hangzhou', 'shanghai-node-1'), pod('shanghai', 'gone-node')];
    const misplaced = audit(obs).findings.filter((f) => f.kind === 'misplaced');
    expect(misplaced.map((f) => [f.pool, f.severity, f.fixable])).toEqual([
      ['hangzhou', 'critical', false],
      ['shanghai', 'critical', false],
    ]);
    expect(misplaced[0].reason).toMatch(
      /runs on node shanghai-node-1 of pool shanghai, outside pool hangzhou; delete the pod/,
    );
    expect(misplaced[1].reason).toMatch(/runs on node gone-node, which no longer exists/);
  });

  it('misplaced with an edited affinity is fixable: the reconcile restores it', async () => {
    const obs = await healthyCluster();
    obs.nodes.push(node('stray', undefined));
    obs.pods = [pod('hangzhou', 'stray'), pod('shanghai', 'shanghai-node-0')];
    const deployment = ownedOf(obs, 'Deployment') as any;
    deployment.spec.template.spec.affinity = {};
    const f = only(audit(obs).findings, 'misplaced');
    expect(f).toMatchObject({
      fixable: true,
      reason: expect.stringMatching(/node stray, which is in no pool.*a reconcile restores the node affinity/),
    });
  });

  it('orders findings by severity, then pool', async () => {
    const obs = await healthyCluster();
    delete statusOf(obs, 'hangzhou').leader;
    statusOf(obs, 'shanghai').etcd.alarms = ['CORRUPT'];
    expect(audit(obs).findings.map((f) => [f.severity, f.pool])).toEqual([
      ['critical', 'shanghai'],
      ['warning', 'hangzhou'],
    ]);
  });
});

describe('health rolls up', () => {
  it('a pool is degraded with warnings and critical with any critical finding', async () => {
    const obs = await healthyCluster();
    delete statusOf(obs, 'hangzhou').leader;
    statusOf(obs, 'shanghai').etcd.alarms = ['NOSPACE'];
    const pools = Object.fromEntries(audit(obs).pools.map((p) => [p.pool, p.health]));
    expect(pools).toEqual({ hangzhou: 'degraded', shanghai: 'critical' });
  });
});
