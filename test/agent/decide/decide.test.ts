import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applyPhases, crdEstablished, parseBootstrapConfigMap } from '../../../agent/decide/bootstrap.ts';
import { type DefragPolicy, decideMaintenance, etcdReport, fragmentation } from '../../../agent/decide/etcd.ts';
import { leaderChangedMeaningfully, leaderFromLease } from '../../../agent/decide/leader.ts';
import { mergePatchFor, ReportSection } from '../../../agent/decide/report.ts';
import { freshAt, shouldWithdraw } from '../../../agent/decide/staleness.ts';
import { BOOTSTRAP_MANIFESTS_KEY, bootstrapManifests, renderBootstrap } from '../../../core/render/bootstrap.ts';
import { managedLabels } from '../../../core/render/labels.ts';
import { objectNames } from '../../../core/render/names.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const MiB = 2 ** 20;

describe('bootstrap content', () => {
  it('parses the rendered ConfigMap to the hash the reconciler rendered', () => {
    const { configMap, hash } = renderBootstrap(
      objectNames('hangzhou'),
      'pool-spirit-system',
      managedLabels('hangzhou'),
    );
    const content = parseBootstrapConfigMap(configMap as never);
    expect(content.contentHash).toBe(hash);
    expect(content.annotationHash).toBe(hash);
    expect(content.manifests).toEqual(bootstrapManifests());
  });

  it('names the document and field that is wrong', () => {
    const cm = (text: string) => ({
      metadata: { name: 'b', namespace: 'ns' },
      data: { [BOOTSTRAP_MANIFESTS_KEY]: text },
    });
    expect(() => parseBootstrapConfigMap({ metadata: { name: 'b', namespace: 'ns' }, data: {} })).toThrow(
      'ConfigMap ns/b: data.manifests.yaml is missing',
    );
    expect(() =>
      parseBootstrapConfigMap(
        cm(
          `${stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } })}---\nkind: Namespace\nmetadata: {name: b}\n`,
        ),
      ),
    ).toThrow(/document 2: apiVersion/);
    expect(() => parseBootstrapConfigMap(cm('apiVersion: v1\nkind: [\n'))).toThrow(/document 1 is not valid YAML/);
    // Empty documents (a trailing ---) are not manifests.
    expect(
      parseBootstrapConfigMap(cm('apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n')).manifests,
    ).toHaveLength(1);
  });

  it('orders Namespaces, then CRDs, then the rest, keeping the order within each', () => {
    const o = (kind: string, name: string) => ({ apiVersion: 'v1', kind, metadata: { name } });
    const { foundation, rest } = applyPhases([
      o('ClusterRole', 'r'),
      o('CustomResourceDefinition', 'c'),
      o('ConfigMap', 'm'),
      o('Namespace', 'n1'),
      o('Namespace', 'n2'),
    ]);
    expect(foundation.map((m) => m.metadata.name)).toEqual(['n1', 'n2', 'c']);
    expect(rest.map((m) => m.metadata.name)).toEqual(['r', 'm']);
    expect(crdEstablished({ status: { conditions: [{ type: 'NamesAccepted', status: 'True' }] } })).toBe(false);
    expect(crdEstablished({ status: { conditions: [{ type: 'Established', status: 'True' }] } })).toBe(true);
  });
});

describe('leader report', () => {
  const lease = (spec: Record<string, unknown>) => ({
    spec: { leaseDurationSeconds: 15, leaseTransitions: 2, holderIdentity: 'node-a', ...spec },
  });

  it('reports the holder of an unexpired lease, with renew time, transitions and the read time', () => {
    const renewTime = '2026-06-01T11:59:50.123456Z';
    expect(leaderFromLease(lease({ renewTime }), NOW)).toEqual({
      holder: 'node-a',
      renewTime,
      transitions: 2,
      observedTime: NOW.toISOString(),
    });
  });

  it('reports no holder for an expired, released, undated or missing lease', () => {
    expect(leaderFromLease(lease({ renewTime: '2026-06-01T11:59:44Z' }), NOW)).toEqual({
      renewTime: '2026-06-01T11:59:44Z',
      transitions: 2,
      observedTime: NOW.toISOString(),
    });
    expect(
      leaderFromLease(lease({ renewTime: '2026-06-01T11:59:59Z', holderIdentity: '' }), NOW).holder,
    ).toBeUndefined();
    expect(leaderFromLease(lease({ renewTime: null, acquireTime: null }), NOW).holder).toBeUndefined();
    expect(
      leaderFromLease(lease({ renewTime: '2026-06-01T11:59:59Z', leaseDurationSeconds: null }), NOW).holder,
    ).toBeUndefined();
    expect(leaderFromLease(undefined, NOW)).toEqual({ observedTime: NOW.toISOString() });
  });

  it('treats a new holder, a lost holder or a transition as news, a renewal as not', () => {
    const a = { holder: 'a', renewTime: 't1', transitions: 1, observedTime: 'o1' };
    expect(leaderChangedMeaningfully(a, { ...a, renewTime: 't2', observedTime: 'o2' })).toBe(false);
    expect(leaderChangedMeaningfully(a, { ...a, holder: 'b', transitions: 2 })).toBe(true);
    expect(leaderChangedMeaningfully(a, { renewTime: 't1', transitions: 1, observedTime: 'o2' })).toBe(true);
    expect(leaderChangedMeaningfully(undefined, a)).toBe(true);
  });
});

describe('etcd decisions', () => {
  const policy: DefragPolicy = { minFreeRatio: 0.5, minFreeBytes: 64 * MiB, cooldownMs: 300_000 };
  const reading = (dbSize: number, inUse: number, alarms: string[] = []) => ({
    dbSizeBytes: dbSize,
    dbSizeInUseBytes: inUse,
    alarms,
    revision: 42,
  });
  const t = NOW.getTime();

  it('defragments only when both the share and the amount of free space pass their thresholds', () => {
    expect(fragmentation(reading(200 * MiB, 50 * MiB))).toBe(0.75);
    expect(decideMaintenance(reading(200 * MiB, 50 * MiB), policy, 512 * MiB, undefined, t)).toMatchObject({
      kind: 'defrag',
      disarmIfUnderQuota: false,
    });
    expect(decideMaintenance(reading(100 * MiB, 40 * MiB), policy, 512 * MiB, undefined, t).kind).toBe('none'); // 60 MiB free
    expect(decideMaintenance(reading(400 * MiB, 210 * MiB), policy, 512 * MiB, undefined, t).kind).toBe('none'); // 0.475
    expect(decideMaintenance(reading(200 * MiB, 50 * MiB), policy, 512 * MiB, t - 60_000, t).kind).toBe('none'); // cooldown
    expect(decideMaintenance({ healthEndpointOk: true }, policy, 512 * MiB, undefined, t).kind).toBe('none');
  });

  it('under NOSPACE compacts and defragments, and in the cooldown only disarms once under the quota', () => {
    expect(
      decideMaintenance(reading(600 * MiB, 590 * MiB, ['NOSPACE']), policy, 512 * MiB, undefined, t),
    ).toMatchObject({ kind: 'defrag', compactTo: 42, disarmIfUnderQuota: true });
    expect(decideMaintenance(reading(100 * MiB, 90 * MiB, ['NOSPACE']), policy, 512 * MiB, t - 1000, t).kind).toBe(
      'disarm',
    );
    expect(decideMaintenance(reading(600 * MiB, 590 * MiB, ['NOSPACE']), policy, 512 * MiB, t - 1000, t).kind).toBe(
      'none',
    );
  });

  it('reports unhealthy with an alarm or a failing health endpoint', () => {
    expect(etcdReport(reading(10, 5), 100, NOW)).toEqual({
      healthy: true,
      dbSizeBytes: 10,
      dbSizeInUseBytes: 5,
      quotaBackendBytes: 100,
      alarms: [],
      observedTime: NOW.toISOString(),
    });
    expect(etcdReport(reading(10, 5, ['NOSPACE', 'NOSPACE']), 100, NOW)).toMatchObject({
      healthy: false,
      alarms: ['NOSPACE'],
    });
    expect(etcdReport({ healthEndpointOk: false }, undefined, NOW)).toEqual({
      healthy: false,
      observedTime: NOW.toISOString(),
    });
  });
});

describe('report sections', () => {
  const section = () =>
    new ReportSection<{ holder?: string; renewTime?: string; observedTime?: string }>({
      clearable: ['holder', 'renewTime'],
      meaningful: (a, b) => a?.holder !== b.holder,
    });

  it('writes news at once and unchanged values once per report interval', () => {
    const s = section();
    s.offer({ holder: 'a', renewTime: '1', observedTime: 'o1' }, 0, 30_000);
    expect(s.pendingPatch()).toEqual({ holder: 'a', renewTime: '1', observedTime: 'o1' });
    s.markWritten(0);
    s.offer({ holder: 'a', renewTime: '2', observedTime: 'o2' }, 10_000, 30_000);
    expect(s.pendingPatch()).toBeUndefined();
    s.offer({ holder: 'a', renewTime: '3', observedTime: 'o3' }, 30_000, 30_000);
    expect(s.pendingPatch()).toEqual({ holder: 'a', renewTime: '3', observedTime: 'o3' });
    s.markWritten(30_000);
    s.offer({ renewTime: '3', observedTime: 'o4' }, 31_000, 30_000);
    expect(s.pendingPatch()).toEqual({ holder: null, renewTime: '3', observedTime: 'o4' });
  });

  it('keeps an unsent patch pending, replaced by the newest observation', () => {
    const s = section();
    s.offer({ holder: 'a', observedTime: 'o1' }, 0, 30_000);
    s.offer({ holder: 'a', observedTime: 'o2' }, 100, 30_000); // the first write failed; still pending
    expect(s.pendingPatch()).toMatchObject({ observedTime: 'o2' });
  });

  it('a withdrawal deletes the owned fields and keeps what it is given', () => {
    const s = section();
    s.force({ observedTime: 'o1' });
    expect(s.pendingPatch()).toEqual({ holder: null, renewTime: null, observedTime: 'o1' });
    expect(mergePatchFor({ a: 1, b: undefined }, ['b', 'c'])).toEqual({ a: 1, b: null, c: null });
  });

  it('withdraws once per outage, after the bound', () => {
    const f = freshAt(1000);
    expect(shouldWithdraw(f, 1000 + 60_000, 60_000)).toBe(false);
    expect(shouldWithdraw(f, 1001 + 60_000, 60_000)).toBe(true);
    expect(shouldWithdraw({ ...f, withdrawn: true }, 1_000_000, 60_000)).toBe(false);
  });
});
