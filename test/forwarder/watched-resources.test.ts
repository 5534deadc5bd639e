import { describe, expect, it } from 'vitest';
import { renderPoolSpirit } from '../../core/index.ts';
import { watchedResources } from '../../forwarder/watched-resources.ts';
import { renderInput } from '../core/fixtures.ts';

const byKind = (kind: string) => watchedResources('pool-spirit-system').find((r) => r.kind === kind)!;

describe('which changes become notices', () => {
  it('skips a PoolSpirit change that only touched reconciler-owned status', () => {
    const r = byKind('PoolSpirit');
    const base = {
      metadata: { name: 'p', uid: 'u', resourceVersion: '1', generation: 1 },
      spec: { nodePool: 'p' },
      status: { conditions: [] },
    };
    const before = r.summarize(base);
    const ownStatus = r.summarize({
      ...base,
      metadata: { ...base.metadata, resourceVersion: '2' },
      status: { conditions: [{ type: 'Available', status: 'True' }] },
    });
    const specEdit = r.summarize({ ...base, metadata: { ...base.metadata, resourceVersion: '3', generation: 2 } });
    const agentReport = r.summarize({
      ...base,
      metadata: { ...base.metadata, resourceVersion: '4' },
      status: { bootstrap: { appliedHash: 'h' } },
    });
    expect(r.isRelevant(before, ownStatus)).toBe(false);
    expect(r.isRelevant(before, specEdit)).toBe(true);
    expect(r.isRelevant(before, agentReport)).toBe(true);
  });

  it('forwards Node membership and readiness changes, not heartbeats', () => {
    const r = byKind('Node');
    const node = (pool: string, ready: string, rv: string) => ({
      metadata: { name: 'n', uid: 'u', resourceVersion: rv, labels: { 'apps.openyurt.io/nodepool': pool } },
      status: { conditions: [{ type: 'Ready', status: ready, lastHeartbeatTime: rv }] },
    });
    const before = r.summarize(node('a', 'True', '1'));
    expect(r.isRelevant(before, r.summarize(node('a', 'True', '2')))).toBe(false);
    expect(r.isRelevant(before, r.summarize(node('a', 'False', '3')))).toBe(true);
    expect(r.isRelevant(before, r.summarize(node('b', 'True', '4')))).toBe(true);
  });

  it('forwards a Pod when what the PoolSpirit status says of it changes, not a healthy pod coming or going ready', () => {
    const r = byKind('Pod');
    const pod = (rv: string, status: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      metadata: {
        name: 'ps-p-1',
        namespace: 'ns',
        uid: 'u',
        resourceVersion: rv,
        labels: { 'poolspirit.io/pool': 'p' },
        ...extra,
      },
      status,
    });
    const ready = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'etcd', ready: true }],
    };
    const fresh = r.summarize(pod('1', {}));
    const readyPod = r.summarize(pod('2', ready));
    const unschedulable = r.summarize(
      pod('3', { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }),
    );
    const crashing = r.summarize(
      pod('4', {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'etcd',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1 } },
          },
        ],
      }),
    );
    // A new pod with nothing wrong, and one turning ready with nothing wrong before: the Deployment's counts say it.
    expect(r.isRelevant(undefined, fresh)).toBe(false);
    expect(r.isRelevant(fresh, readyPod)).toBe(false);
    // What the status would report: a pod nothing can schedule, a crash loop, and the problem going away.
    expect(r.isRelevant(undefined, unschedulable)).toBe(true);
    expect(r.isRelevant(readyPod, crashing)).toBe(true);
    expect(r.isRelevant(crashing, readyPod)).toBe(true);
    // A pod going, or gone.
    expect(r.isRelevant(readyPod, r.summarize(pod('5', ready, { deletionTimestamp: 'now' })))).toBe(true);
    expect(r.isRelevant(readyPod, undefined)).toBe(true);
  });

  it("skips the reconciler's own creations, not anyone else's", () => {
    for (const kind of ['PoolSpirit', 'Deployment']) {
      const r = byKind(kind);
      const created = (manager: string, generation = 1) => ({
        metadata: {
          name: 'p',
          namespace: 'pool-spirit-system',
          uid: 'u',
          resourceVersion: '1',
          generation,
          labels: { 'poolspirit.io/pool': 'p' },
          managedFields: [{ manager, operation: 'Apply' }],
        },
      });
      expect(r.isRelevant(undefined, r.summarize(created('pool-spirit-reconciler'))), kind).toBe(false);
      expect(r.isRelevant(undefined, r.summarize(created('kubectl-client-side-apply'))), kind).toBe(true);
      // Someone wrote it since (a second manager, or a spec edit): that is a change to act on.
      expect(r.isRelevant(undefined, r.summarize(created('pool-spirit-reconciler', 2))), kind).toBe(true);
    }
  });

  it('forwards a Deployment whose rollout or readiness moved, not a status write that moved nothing', () => {
    const r = byKind('Deployment');
    const dep = (rv: string, status: Record<string, unknown>) => ({
      metadata: {
        name: 'ps-p',
        namespace: 'pool-spirit-system',
        uid: 'u',
        resourceVersion: rv,
        generation: 1,
        labels: { 'poolspirit.io/pool': 'p' },
      },
      status,
    });
    const before = r.summarize(dep('1', { observedGeneration: 1, replicas: 1, updatedReplicas: 1 }));
    const heartbeat = r.summarize(
      dep('2', {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        conditions: [{ type: 'Progressing', lastUpdateTime: 'later' }],
      }),
    );
    const ready = r.summarize(
      dep('3', { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }),
    );
    expect(r.isRelevant(before, heartbeat)).toBe(false);
    expect(r.isRelevant(before, ready)).toBe(true);
    // The controller's first status (nothing rolled out yet) moves nothing the reconciler derives from a
    // Deployment with no status; its pod being counted (rolled out, not ready) does.
    const fresh = r.summarize(dep('4', {}));
    const first = r.summarize(dep('5', { observedGeneration: 1, replicas: 0, unavailableReplicas: 1 }));
    expect(r.isRelevant(fresh, first)).toBe(false);
    expect(r.isRelevant(first, before)).toBe(true);
    // A label someone edited is still a change.
    const relabelled = r.summarize({ ...dep('6', {}), metadata: { ...dep('6', {}).metadata, labels: { x: 'y' } } });
    expect(r.isRelevant(fresh, relabelled)).toBe(true);
  });
});

describe('owned objects', () => {
  const owned = (
    managers: Array<{ manager: string; time?: string; subresource?: string }>,
    extra: Record<string, unknown> = {},
  ) => ({
    metadata: {
      name: 'ps-p-ca',
      namespace: 'pool-spirit-system',
      uid: 'u',
      resourceVersion: String(managers.length),
      labels: { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': 'p' },
      ownerReferences: [
        { apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', name: 'p', uid: 'np', controller: true },
      ],
      managedFields: managers.map((m) => ({ operation: 'Update', ...m })),
      ...extra,
    },
  });

  it('watches every kind renderPoolSpirit emits, by the product labels, metadata only except the Deployment', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const resources = watchedResources('pool-spirit-system');
    for (const kind of new Set(r.objects.map((o) => o.kind))) {
      const w = resources.find((x) => x.kind === kind);
      expect(w, kind).toBeDefined();
      expect(w!.labelSelector, kind).toBe('app.kubernetes.io/managed-by=pool-spirit,poolspirit.io/pool');
      expect(w!.namespace, kind).toBe('pool-spirit-system');
      expect(w!.metadataOnly ?? false, kind).toBe(kind !== 'Deployment');
    }
  });

  it("forwards a deletion or someone else's write, never the reconciler's own", () => {
    const r = byKind('Secret');
    const ours = r.summarize(owned([{ manager: 'pool-spirit-reconciler', time: 't1' }]));
    const oursAgain = r.summarize(
      owned([
        { manager: 'pool-spirit-reconciler', time: 't2' },
        { manager: 'x', subresource: 'status' },
      ]),
    );
    const edited = r.summarize(
      owned([
        { manager: 'pool-spirit-reconciler', time: 't1' },
        { manager: 'kubectl-edit', time: 't3' },
      ]),
    );
    const editedAgain = r.summarize(
      owned([
        { manager: 'pool-spirit-reconciler', time: 't1' },
        { manager: 'kubectl-edit', time: 't4' },
      ]),
    );
    const deleting = r.summarize(
      owned([{ manager: 'pool-spirit-reconciler', time: 't1' }], { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    );
    expect(r.isRelevant(undefined, ours)).toBe(false);
    expect(r.isRelevant(ours, oursAgain)).toBe(false);
    expect(r.isRelevant(ours, edited)).toBe(true);
    expect(r.isRelevant(edited, editedAgain)).toBe(true);
    expect(r.isRelevant(ours, deleting)).toBe(true);
    expect(r.isRelevant(ours, undefined)).toBe(true);
    expect(r.isRelevant(undefined, edited)).toBe(true);
  });

  it('forwards a write that left no trace in managedFields (a key someone removed), not a replay of the same version', () => {
    const r = byKind('Secret');
    const ours = r.summarize(owned([{ manager: 'pool-spirit-reconciler', time: 't1' }], { resourceVersion: '7' }));
    // A JSON patch removing /data/apiserver.crt: the remover owns no field, so it gets no entry.
    const keyRemoved = r.summarize(
      owned([{ manager: 'pool-spirit-reconciler', time: 't1' }], { resourceVersion: '8' }),
    );
    const sameVersion = r.summarize(
      owned([{ manager: 'pool-spirit-reconciler', time: 't1' }], { resourceVersion: '7' }),
    );
    const ourRewrite = r.summarize(
      owned([{ manager: 'pool-spirit-reconciler', time: 't2' }], { resourceVersion: '9' }),
    );
    expect(r.isRelevant(ours, keyRemoved)).toBe(true);
    expect(r.isRelevant(ours, sameVersion)).toBe(false);
    expect(r.isRelevant(keyRemoved, ourRewrite)).toBe(false);
  });

  it('names the pool by the owner, whose name is not cut to a label value', () => {
    const long = 'a'.repeat(80);
    const s = byKind('ConfigMap').summarize({
      metadata: {
        name: 'x',
        uid: 'u',
        resourceVersion: '1',
        labels: { 'poolspirit.io/pool': 'cut' },
        ownerReferences: [{ kind: 'PoolSpirit', name: long }],
      },
    });
    expect(s.poolName).toBe(long);
  });
});
