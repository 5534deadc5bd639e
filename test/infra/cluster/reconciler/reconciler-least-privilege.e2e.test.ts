/**
 * The reconciler's ClusterRole and Roles are the minimum, with kube-apiserver enforcing them: every function
 * runs its end-to-end paths against the built control plane as a member of group `pool-spirit:reconciler`
 * with no other rights, and kube-apiserver's audit log says what it decided (rbac-judge.ts). Nothing may be
 * forbidden, and every rule (every verb × resource it grants) must have been needed by a request. The
 * reconcile writes no RBAC object (the agents' rights are static, infra/cluster/agent/rbac.yaml), so no grant
 * is held for kube's escalation check: every rule is used by a request of the functions themselves.
 * Negative controls show the checks can fail: an extra rule is reported unused; without `patch` or `create`
 * on poolspirits the reconcile of a new pool fails with a 403. What this identity can no longer do:
 * test/infra/cluster/reconciler/reconciler-bounded.e2e.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE, type KubeObject } from '../../../../core/index.ts';
import { waitFor } from '../../../support/wait.ts';
import { roleOfReason } from './rule-usage.ts';
import { type RbacWorld, RECONCILER_USER, reconcilerRoles, startRbacWorld } from './world.ts';

const NS = DEFAULT_NAMESPACE;
const POOL = 'edge-a';
const INSTANCES = { 'edge-a-node-0': 'i-0a1b2c3d4e5f60001', 'edge-a-node-1': 'i-0a1b2c3d4e5f60002' } as const;
let world: RbacWorld;

function condition(obj: KubeObject | undefined, type: string): string | undefined {
  const conditions =
    (obj?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
  return conditions.find((c) => c.type === type)?.status;
}

/** Reconciles (as the forwarder's notices would ask) until the pool's PoolSpirit is Available. */
async function reconcileUntilAvailable(pool: string): Promise<void> {
  await waitFor(
    async () => {
      await world.reconcile(pool);
      return condition(await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', pool), 'Available') === 'True';
    },
    20_000,
    `PoolSpirit ${pool} Available`,
    50,
  );
}

/** The pool-spirit pod of `pool` that is not being deleted, and its node. */
async function spiritPod(pool: string): Promise<{ name: string; node?: string } | undefined> {
  const pods = await world.admin.list<V1Pod>(
    'v1',
    'Pod',
    NS,
    undefined,
    undefined,
    undefined,
    undefined,
    `poolspirit.io/pool=${pool}`,
  );
  const live = pods.items.find((p) => !p.metadata?.deletionTimestamp);
  return live && { name: live.metadata?.name ?? '', node: live.spec?.nodeName };
}

beforeAll(async () => {
  world = await startRbacWorld();
  for (const [name, instance] of Object.entries(INSTANCES)) await world.addEc2Node(name, POOL, instance);
}, 180_000);
afterAll(async () => {
  await world?.stop();
});

describe('the functions with only the reconciler RBAC (kube-apiserver enforcing RBAC)', () => {
  it('reconciles a new edge pool to Available, then a no-op, then a spec edit', async () => {
    await world.applyAsAdmin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: POOL },
      spec: { type: 'Edge' },
    });
    const first = await world.reconcile(POOL);
    expect(first.result).toBe('applied');
    await reconcileUntilAvailable(POOL);
    expect(await world.reconcile(POOL)).toMatchObject({ result: 'unchanged', clusterWrites: 0 });

    await world.applyAsAdmin({
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: POOL },
      spec: { nodePool: POOL, agent: { version: '0.1.1' } },
    });
    const edited = await world.reconcile(POOL);
    expect(edited.result).toBe('applied');
    expect(edited.applied.join(' ')).toContain('Deployment');
    await reconcileUntilAvailable(POOL);
  });

  it('probes the leader of every pool', async () => {
    const result = await world.probe();
    expect(result.clusters[0]).toMatchObject({ pools: [expect.objectContaining({ nodePool: POOL })] });
  });

  it('audits the cluster and finds injected drift, which the reconcile then repairs', async () => {
    await world.admin.delete({ apiVersion: 'v1', kind: 'Service', metadata: { name: `ps-${POOL}`, namespace: NS } });
    await world.applyAsAdmin({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'ps-gone-bootstrap',
        namespace: NS,
        labels: { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': 'gone' },
      },
      data: { a: 'b' },
    });
    const result = await world.audit();
    if (result.kind !== 'cluster') throw new Error(`expected a cluster audit, got ${result.kind}`);
    expect(result.record.error).toBeUndefined();
    expect(result.record.findings.map((f) => `${f.kind} ${f.pool}`)).toEqual(
      expect.arrayContaining([`spec-drift ${POOL}`]),
    );
    expect(result.reconcileRequests).toBeGreaterThan(0);
    await world.admin.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ps-gone-bootstrap', namespace: NS },
    });
    await reconcileUntilAvailable(POOL);
    expect(await world.read('v1', 'Service', `ps-${POOL}`, NS)).toBeDefined();
  });

  it('takes a rollout step that patches PoolSpirits', async () => {
    const result = await world.rollout({
      command: 'start',
      rollout: { id: `rbac-${randomUUID().slice(0, 8)}`, patch: { agent: { version: '0.2.0' } }, soak: 0 },
    });
    expect(result.rollouts[0].actions).toEqual([expect.objectContaining({ kind: 'apply-version', poolsWritten: 1 })]);
    expect(result.rollouts[0].actions[0].error).toBeUndefined();
    const spirit = await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL);
    expect((spirit!.spec as { agent?: { version?: string } }).agent?.version).toBe('0.2.0');
    await reconcileUntilAvailable(POOL);
  });

  it('moves the pool-spirit off an instance being terminated (cordon, pod delete)', async () => {
    const pod = await waitFor(
      async () => ((await spiritPod(POOL))?.node ? spiritPod(POOL) : undefined),
      10_000,
      'a scheduled pool-spirit pod',
    );
    const instance = INSTANCES[pod!.node as keyof typeof INSTANCES];
    const result = await world.cloudEvent({
      version: '0',
      id: randomUUID(),
      'detail-type': 'EC2 Instance State-change Notification',
      source: 'aws.ec2',
      account: '123456789012',
      time: new Date().toISOString(),
      region: 'eu-west-1',
      resources: [`arn:aws:ec2:eu-west-1:123456789012:instance/${instance}`],
      detail: { 'instance-id': instance, state: 'shutting-down' },
    });
    expect(result).toMatchObject({
      result: 'handled',
      matches: [{ node: pod!.node, cordoned: true, moves: [{ pool: POOL, pod: pod!.name, action: 'rescheduled' }] }],
    });
    const node = await world.read('v1', 'Node', pod!.node!);
    expect((node!.spec as { unschedulable?: boolean }).unschedulable).toBe(true);
  });

  it('deletes the PoolSpirit of a pool switched to Cloud, and does nothing for a deleted NodePool', async () => {
    await world.applyAsAdmin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: POOL },
      spec: { type: 'Cloud' },
    });
    expect((await world.reconcile(POOL)).result).toBe('not-edge');
    await waitFor(
      async () => (await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL)) === undefined,
      10_000,
      'PoolSpirit deleted',
    );

    await world.applyAsAdmin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: 'edge-b' },
      spec: { type: 'Edge' },
    });
    expect((await world.reconcile('edge-b')).result).toBe('applied');
    await world.admin.delete({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: 'edge-b' },
    });
    expect((await world.reconcile('edge-b')).result).toBe('gone');
  });

  it('was never refused anything, and wrote no RBAC object', async () => {
    const denials = await world.authz.denials();
    expect(
      denials.map((d) => d.message),
      'requests of the reconciler identity refused with 403',
    ).toEqual([]);
    // And it did act as that identity, through RBAC (not as an admin).
    const requests = await world.authz.requests();
    expect(requests.some((r) => roleOfReason(r.reason)?.name === 'pool-spirit-reconciler')).toBe(true);
    // Where kube's escalation check would have needed grants held for it: nothing of the kind was written.
    expect((await world.authz.rbacWrites()).map((r) => `${r.verb} ${r.path}`)).toEqual([]);
  });

  it('used every rule it holds', async () => {
    const roles = reconcilerRoles(world.installed);
    expect(roles.map((r) => `${r.kind} ${r.namespace ?? ''}/${r.name}`).sort()).toEqual([
      'ClusterRole /pool-spirit-reconciler',
      'Role default/pool-spirit-reconciler',
      'Role kube-system/pool-spirit-reconciler',
      'Role pool-spirit-system/pool-spirit-reconciler',
    ]);
    expect(await unusedRules()).toEqual([]);
  });

  it('negative control: a rule nothing needs is reported unused', async () => {
    const original = reconcilerClusterRole();
    await world.applyAsAdmin({
      ...original,
      rules: [...(original.rules as unknown[]), { apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
    });
    try {
      expect(await world.authz.report({ kind: 'ClusterRole', name: original.metadata.name })).toHaveLength(
        (original.rules as unknown[]).length + 1,
      );
      expect(await unusedRules()).toEqual([
        `ClusterRole pool-spirit-reconciler rule ${(original.rules as unknown[]).length} ({"apiGroups":[""],"resources":["nodes"],"verbs":["get"]}): never used`,
      ]);
    } finally {
      await world.applyAsAdmin(original);
    }
  });

  // `patch` fails the server-side apply of the new PoolSpirit; `create` fails it too, because an apply that
  // creates is authorized as a create as well (kube-apiserver's patch handler).
  it.each(['patch', 'create'])(
    'negative control: without `%s` on poolspirits the reconcile of a new pool fails with 403',
    async (verb) => {
      const pool = `edge-no-${verb}`;
      const original = reconcilerClusterRole();
      const rules = structuredClone(original.rules) as Array<{
        apiGroups: string[];
        resources: string[];
        verbs: string[];
      }>;
      const rule = rules.find((r) => r.resources.includes('poolspirits'))!;
      rule.verbs = rule.verbs.filter((v) => v !== verb);
      await world.applyAsAdmin({ ...original, rules });
      await world.applyAsAdmin({
        apiVersion: 'apps.openyurt.io/v1beta2',
        kind: 'NodePool',
        metadata: { name: pool },
        spec: { type: 'Edge' },
      });
      const attributes = { verb, group: 'poolspirit.io', resource: 'poolspirits', name: pool };
      try {
        await waitFor(
          async () => !(await world.reconcilerMay(attributes)),
          10_000,
          `the role without ${verb} in force`,
        );
        await world.authz.reset();
        await expect(world.reconcile(pool)).rejects.toThrow(/403|forbidden/i);
        expect((await world.authz.denials()).map((d) => d.message)).toEqual([
          `poolspirits.poolspirit.io "${pool}" is forbidden: User "${RECONCILER_USER}" cannot ${verb} resource "poolspirits" in API group "poolspirit.io" at the cluster scope`,
        ]);
        expect(await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', pool)).toBeUndefined();
      } finally {
        await world.applyAsAdmin(original);
        await waitFor(() => world.reconcilerMay(attributes), 10_000, `the role with ${verb} back in force`);
      }
      // The same reconcile succeeds with the rule back: that one verb was the difference.
      expect((await world.reconcile(pool)).result).toBe('applied');
    },
  );
});

function reconcilerClusterRole() {
  const role = world.installed.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'pool-spirit-reconciler');
  if (!role) throw new Error('infra/cluster has no ClusterRole pool-spirit-reconciler');
  return role;
}

/**
 * Every rule of the reconciler's roles that nothing needed, or the verb × resource pairs of a rule nothing
 * needed, as `authz.report` sees them: a permission counts as needed when a request of the reconciler used it.
 */
async function unusedRules(): Promise<string[]> {
  const problems: string[] = [];
  for (const role of reconcilerRoles(world.installed)) {
    const report = await world.authz.report(role);
    if (report.length === 0)
      problems.push(`${role.kind} ${role.namespace ? `${role.namespace}/` : ''}${role.name}: not in the cluster`);
    for (const r of report) {
      const where = `${role.kind} ${role.namespace ? `${role.namespace}/` : ''}${role.name} rule ${r.ruleIndex} (${JSON.stringify(r.rule)})`;
      const unused = r.unusedPermissions;
      if (r.allowed === 0) problems.push(`${where}: never used`);
      else if (unused.length > 0) problems.push(`${where}: unused ${unused.join(', ')}`);
    }
  }
  return problems;
}
