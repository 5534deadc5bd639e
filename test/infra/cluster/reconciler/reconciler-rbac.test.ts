/**
 * The functions' RBAC (infra/cluster/reconciler/rbac.yaml) against the code, three ways:
 * 1. equal, grant for grant, to the union of the per-function table in core/security/reconciler-permissions.ts,
 *    which takes the kinds and the agent's rules from what core/render emits;
 * 2. that table is honest: each function, run against the local API, makes only requests its own rows allow;
 * 3. nothing in the role goes unused: every grant was needed by a request below.
 * And it holds no verb on RBAC objects: the reconcile writes none (the agents' rights are static).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { HttpMethod, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { getCluster } from '../../../../adapters/state-table/index.ts';
import { DEFAULT_NAMESPACE } from '../../../../core/index.ts';
import type { Grant, PermissionInputs, PermissionUser, RequestAttributes } from '../../../../core/security/index.ts';
import {
  allows,
  compactRules,
  compareGrants,
  functionApiUses,
  grantKey,
  grantsOf,
  permissionTable,
  RECONCILER_GROUP,
  reconcilerGrants,
  renderedKinds,
  resourceOf,
  usesToGrants,
} from '../../../../core/security/index.ts';
import type { RequestRecord } from '../../../../dev/local/kube-api/index.ts';
import { auditDeps } from '../../../../functions/audit/handler.ts';
import { OWNED_KINDS, observeCluster } from '../../../../functions/audit/observe.ts';
import { moveOffLeavingNode } from '../../../../functions/cloud-events/move.ts';
import { probeDeps } from '../../../../functions/probe/handler.ts';
import { probeCluster } from '../../../../functions/probe/run.ts';
import { rolloutClusterOps } from '../../../../functions/rollout/cluster-ops.ts';
import {
  CLUSTER_ID,
  IP_ALLOCATOR,
  type ReconcileWorld,
  startReconcileWorld,
} from '../../../functions/reconcile/harness.ts';
import { restrictedPod } from '../../../support/restricted-pod.ts';
import { EVENT_NAMESPACE, kustomize, kustomizeOverlay, permissionInputs, REPO_ROOT } from '../../manifests.ts';

const GROUP = { kind: 'Group' as const, name: RECONCILER_GROUP };
const silent = () => new Logger({ serviceName: 'rbac-test', logLevel: 'SILENT' });

let inputs: PermissionInputs;
let manifestGrants: Grant[];

beforeAll(async () => {
  inputs = await permissionInputs();
  manifestGrants = grantsOf((await kustomize('infra/cluster')).objects, GROUP);
});

const show = (grants: Grant[]) => grants.map(grantKey).sort().join('\n');

describe('reconciler RBAC is derived from the code', () => {
  it('infra/cluster grants group pool-spirit:reconciler exactly the union of what the functions use', () => {
    const expected = reconcilerGrants(inputs);
    const { missing, extra } = compareGrants(manifestGrants, expected);
    const rules = Object.fromEntries([...compactRules(expected)].map(([scope, r]) => [scope || 'cluster-wide', r]));
    expect({ missing: show(missing), extra: show(extra) }, `expected rules by scope:\n${stringify(rules)}`).toEqual({
      missing: '',
      extra: '',
    });
  });

  it('the audit lists exactly the kinds the reconcile renders (the derivation covers its lists)', () => {
    const rendered = renderedKinds(inputs.rendered)
      .map((k) => `${k.apiVersion} ${k.kind} ${k.namespace ? 'ns' : 'cluster'}`)
      .sort();
    const audited = OWNED_KINDS.map((k) => `${k.apiVersion} ${k.kind} ${k.namespaced ? 'ns' : 'cluster'}`).sort();
    expect(audited).toEqual(rendered);
  });

  it('holds no verb on roles, rolebindings, clusterroles or clusterrolebindings, and renders no RBAC object', () => {
    expect(manifestGrants.filter((g) => g.apiGroup === 'rbac.authorization.k8s.io').map(grantKey)).toEqual([]);
    expect(
      inputs.rendered.filter((o) => o.apiVersion.startsWith('rbac.authorization.k8s.io/')).map((o) => o.kind),
    ).toEqual([]);
    expect(() => resourceOf('rbac.authorization.k8s.io/v1', 'ClusterRole')).toThrow(/no RBAC objects at run time/);
  });

  it('docs/cluster-install.md shows the current permission table', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/cluster-install.md'), 'utf8');
    const shown = /<!-- permission-table:start -->\n([\s\S]*?)\n<!-- permission-table:end -->/.exec(doc)?.[1];
    expect(shown, 'replace the table in docs/cluster-install.md with this one').toBe(
      permissionTable(functionApiUses(inputs)),
    );
  });

  it("the owner-references-enforcement component adds update of the two owners' finalizers, nothing else", async () => {
    const objects = await kustomizeOverlay(
      ['infra/cluster'],
      ['infra/cluster/components/owner-references-enforcement'],
    );
    const { missing, extra } = compareGrants(grantsOf(objects, GROUP), manifestGrants);
    expect({ missing, extra: extra.map(grantKey).sort() }).toEqual({
      missing: [],
      extra: [
        '*cluster* apps.openyurt.io nodepools/finalizers update *',
        '*cluster* poolspirit.io poolspirits/finalizers update *',
      ],
    });
  });

  it('no wildcards, no escalate/bind/impersonate, Secrets only in the product namespace', () => {
    for (const g of manifestGrants) {
      expect([g.apiGroup, g.resource, g.verb], grantKey(g)).not.toContain('*');
      expect(['escalate', 'bind', 'impersonate']).not.toContain(g.verb);
      if (g.resource === 'secrets') expect(g.namespace).toBe(DEFAULT_NAMESPACE);
    }
  });
});

describe('what each function really requests (kube-apiserver audit log)', () => {
  let world: ReconcileWorld;
  const observed: Array<{ by: PermissionUser; req: RequestAttributes; record: RequestRecord }> = [];

  /** Runs `fn` as function `by`; every resource request it makes is recorded as that function's. */
  async function as<T>(by: PermissionUser, fn: () => Promise<T>): Promise<T> {
    const mark = await world.requestLog.mark();
    const out = await fn();
    for (const record of await world.requestLog.since(mark)) {
      // Discovery is non-resource (allowed to every authenticated user by system:discovery); the harness's
      // stand-in for the Service IP allocator is kube-apiserver's job, not a function's.
      if (!record.resource || record.fieldManager === IP_ALLOCATOR) continue;
      const resource = record.subresource ? `${record.resource}/${record.subresource}` : record.resource;
      const req = {
        namespace: record.namespace ?? '',
        apiGroup: record.group ?? '',
        resource,
        verb: record.verb,
        name: record.name,
      };
      observed.push({ by, req, record });
      // An apply that created the object was authorized as a create too.
      if (record.verb === 'patch' && record.status === 201)
        observed.push({ by, req: { ...req, verb: 'create' }, record });
    }
    return out;
  }
  const admin = (obj: Record<string, unknown>) => world.admin.applyJson(obj as KubernetesObject, 'rbac-test', true);

  beforeAll(async () => {
    world = await startReconcileWorld();
    const client = async () =>
      world.deps.clusterClient(
        await world.deps.clusterAccess.connectionFor((await getCluster(world.table, CLUSTER_ID))!),
        CLUSTER_ID,
      );

    await world.createNodePool('edge-a', { type: 'Edge' });
    await as('reconcile', () => world.invoke('edge-a'));
    await as('reconcile', () => world.invoke('edge-a'));
    const poolSpirit = (await (await client()).getPoolSpirit('edge-a'))!;
    await as('reconcile', async () =>
      (await client()).createEvent({ involved: poolSpirit, type: 'Normal', reason: 'RbacTest', message: 'x' }),
    );

    const audit = auditDeps({ table: world.table, logger: silent() });
    await as('audit', async () => observeCluster(audit, CLUSTER_ID, await client()));
    await as('probe', () => probeCluster(probeDeps({ table: world.table, logger: silent() }), CLUSTER_ID));
    const connection = await world.deps.clusterAccess.connectionFor((await getCluster(world.table, CLUSTER_ID))!);
    await as('rollout', async () => {
      const ops = rolloutClusterOps(connection);
      await ops.listPoolSpirits();
      await ops.applySpecFields('edge-a', { paused: false });
    });

    // A node of the pool going away, with the pool-spirit pod on it and another Ready node to move to.
    for (const [name, instance] of [
      ['node-1', 'i-0leaving'],
      ['node-2', 'i-0staying'],
    ]) {
      await admin({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'apps.openyurt.io/nodepool': 'edge-a' } },
        spec: { providerID: `aws:///eu-west-1a/${instance}` },
      });
      await world.admin.requestJson(HttpMethod.PATCH, `/api/v1/nodes/${name}/status`, {
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'rbac-test', force: 'true' },
      });
    }
    await admin(
      restrictedPod({
        name: 'ps-edge-a-x',
        namespace: DEFAULT_NAMESPACE,
        labels: { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': 'edge-a' },
        nodeName: 'node-1',
      }),
    );
    const moved = await as('cloud-events', async () =>
      moveOffLeavingNode(
        await client(),
        CLUSTER_ID,
        { eventId: 'e1', instanceId: 'i-0leaving', why: 'stopping' },
        new Date(),
      ),
    );
    expect(moved?.moves).toEqual([{ pool: 'edge-a', pod: 'ps-edge-a-x', action: 'rescheduled' }]);

    // The pool stops being edge: the reconcile deletes the PoolSpirit it created.
    await admin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: 'edge-a' },
      spec: { type: 'Cloud' },
    });
    const gone = await as('reconcile', () => world.invoke('edge-a'));
    expect(gone.result).toBe('not-edge');
  });
  afterAll(() => world?.stop());

  it('Events about the cluster-scoped PoolSpirit go to the namespace the role allows', () => {
    const events = observed.filter((o) => o.req.resource === 'events');
    expect(events.map((o) => o.req.namespace)).toEqual([EVENT_NAMESPACE]);
  });

  it("every request of every function is allowed by infra/cluster and by that function's own rows", () => {
    const uses = functionApiUses(inputs);
    const problems: string[] = [];
    for (const { by, req, record } of observed) {
      const line = `${by}: ${req.verb} ${req.apiGroup || 'core'}/${req.resource} ${req.namespace || '(cluster)'} ${req.name ?? ''} [${record.status}]`;
      if (!allows(manifestGrants, req)) problems.push(`forbidden by infra/cluster — ${line}`);
      if (!allows(usesToGrants(uses.filter((u) => u.by === by)), req)) problems.push(`not in ${by}'s rows — ${line}`);
    }
    expect(problems).toEqual([]);
  });

  it('no grant goes unused: each was needed by a request above', () => {
    const unused = manifestGrants.filter((g) => !observed.some((o) => allows([g], o.req)));
    expect(show(unused)).toBe('');
  });
});
