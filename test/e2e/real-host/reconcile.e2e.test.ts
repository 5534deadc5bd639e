/**
 * The reconcile judged by real Kubernetes: the functions' identity with the shipped RBAC against the built
 * kube-apiserver, the real controller-manager turning the Deployment into a ReplicaSet and a Pod, the real
 * scheduler binding it, and the real garbage collector removing what a deleted NodePool owned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE, type KubeObject } from '../../../core/index.ts';
import { objectNames } from '../../../core/render/names.ts';
import { type RbacWorld, startRbacWorld } from '../../infra/cluster/reconciler/world.ts';
import { waitFor } from '../../support/wait.ts';

const NS = DEFAULT_NAMESPACE;
const POOL = 'real-a';
const NAMES = objectNames(POOL);

const condition = (obj: KubeObject | undefined, type: string) =>
  ((obj?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  )?.status;

describe('reconcile on the real control plane', () => {
  let world: RbacWorld;
  const spirit = () => world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL);
  const deployment = () => world.read('apps/v1', 'Deployment', NAMES.base, NS);

  beforeAll(async () => {
    world = await startRbacWorld();
    await world.addEc2Node(`${POOL}-node-0`, POOL, 'i-0f1e2d3c4b5a60001');
  }, 180_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('creates the pool-spirit with the minimum writes and reaches Available through the real controllers', async () => {
    await world.applyAsAdmin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: POOL },
      spec: { type: 'Edge' },
    });
    const first = await world.reconcile(POOL);
    expect(first.result).toBe('applied');
    expect(first.applied.map((a) => a.split(' ')[0])).toEqual([
      'PoolSpirit',
      'Service',
      'Secret',
      'Secret',
      'Secret',
      'ConfigMap',
      'ServiceAccount',
      'Deployment',
    ]);
    await waitFor(
      async () => {
        await world.reconcile(POOL);
        return condition(await spirit(), 'Available') === 'True';
      },
      60_000,
      'Available',
      100,
    );
    const replicaSets = await world.admin.list('apps/v1', 'ReplicaSet', NS);
    expect(replicaSets.items.some((rs) => rs.metadata?.ownerReferences?.[0]?.name === NAMES.base)).toBe(true);
  }, 90_000);

  it('a converged pool costs zero writes', async () => {
    const again = await world.reconcile(POOL);
    expect(again).toMatchObject({ result: 'unchanged', clusterWrites: 0, applied: [] });
  });

  it('reverts drift on the Deployment', async () => {
    const live = (await deployment())!;
    const image = (
      live.spec as { template: { spec: { containers: Array<{ name: string; image: string }> } } }
    ).template.spec.containers.find((c) => c.name === 'etcd')!.image;
    await world.applyAsAdmin({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: NAMES.base, namespace: NS },
      spec: { template: { spec: { containers: [{ name: 'etcd', image: 'registry.k8s.io/etcd:3.5.0-0' }] } } },
    });
    const fixed = await world.reconcile(POOL);
    expect(fixed.applied).toContain(`Deployment ${NS}/${NAMES.base}`);
    const after = (await deployment())!;
    expect(
      (
        after.spec as { template: { spec: { containers: Array<{ name: string; image: string }> } } }
      ).template.spec.containers.find((c) => c.name === 'etcd')!.image,
    ).toBe(image);
  }, 30_000);

  it("the audit, as the functions' identity on the real apiserver, finds a deleted Service and the reconcile repairs it", async () => {
    await world.admin.delete({ apiVersion: 'v1', kind: 'Service', metadata: { name: NAMES.base, namespace: NS } });
    const result = await world.audit();
    if (result.kind !== 'cluster') throw new Error(`expected a cluster audit, got ${result.kind}`);
    expect(result.record.error).toBeUndefined();
    expect(result.record.findings.map((f) => `${f.kind} ${f.pool}`)).toContain(`spec-drift ${POOL}`);
    expect(result.reconcileRequests).toBeGreaterThan(0);
    await world.reconcile(POOL);
    expect(await world.read('v1', 'Service', NAMES.base, NS)).toBeDefined();
    const clean = await world.audit();
    if (clean.kind !== 'cluster') throw new Error('expected a cluster audit');
    expect(clean.record.findings.filter((f) => f.pool === POOL && f.kind === 'spec-drift')).toEqual([]);
  }, 30_000);

  it('a rollout step and the leader probe work with the shipped RBAC on the real apiserver', async () => {
    const step = await world.rollout({
      command: 'start',
      rollout: { id: 'real-agent-020', patch: { agent: { version: '0.2.0' } }, soak: 0 },
    });
    expect(step.rollouts[0]!.actions).toEqual([expect.objectContaining({ kind: 'apply-version', poolsWritten: 1 })]);
    expect(step.rollouts[0]!.actions[0]!.error).toBeUndefined();
    expect(((await spirit())!.spec as { agent?: { version?: string } }).agent?.version).toBe('0.2.0');
    await waitFor(
      async () => {
        await world.reconcile(POOL);
        return condition(await spirit(), 'Available') === 'True';
      },
      60_000,
      'Available on agent 0.2.0',
      100,
    );
    // The sim agent reports the pod's node as leader, renewed now: the probe reads it through the real API.
    const probe = await world.probe();
    expect(probe.clusters.map((c) => c.pools.length)).toEqual([1]);
    expect(probe.counts.healthy).toBe(1);
  }, 90_000);

  it('deleting the NodePool leaves nothing: the real garbage collector takes every owned object', async () => {
    await world.admin.delete({ apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', metadata: { name: POOL } });
    await world.reconcile(POOL);
    const owned: Array<[string, string, string, string?]> = [
      ['poolspirit.io/v1alpha1', 'PoolSpirit', POOL],
      ['apps/v1', 'Deployment', NAMES.base, NS],
      ['v1', 'Service', NAMES.base, NS],
      ['v1', 'Secret', NAMES.caSecret, NS],
      ['v1', 'Secret', NAMES.pkiSecret, NS],
      ['v1', 'Secret', NAMES.agentSecret, NS],
      ['v1', 'ConfigMap', NAMES.bootstrapConfigMap, NS],
      ['v1', 'ServiceAccount', NAMES.base, NS],
    ];
    await waitFor(
      async () => {
        const left = await Promise.all(owned.map(([v, k, n, ns]) => world.read(v, k, n, ns)));
        const pods = await world.admin.list('v1', 'Pod', NS);
        return left.every((o) => o === undefined) && pods.items.length === 0;
      },
      60_000,
      'every owned object and the pod gone',
    );
  }, 90_000);
});
