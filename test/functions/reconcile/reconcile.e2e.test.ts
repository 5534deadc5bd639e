import { HttpMethod, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { getCluster, getItem, keys, readPoolState } from '../../../adapters/state-table/index.ts';
import type { KubeObject } from '../../../core/index.ts';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import { RequeueError } from '../../../core/outcome.ts';
import type { RequestRecord } from '../../../dev/local/kube-api/index.ts';
import { LOCKED_RECHECK_MS } from '../../../functions/reconcile/run.ts';
import * as x509 from '../../../shared/x509.ts';
import type { ReconcileWorld } from './harness.ts';
import { CLUSTER_ID, IP_ALLOCATOR, startReconcileWorld } from './harness.ts';

const NS = DEFAULT_NAMESPACE;
/**
 * How long collection of a deleted owner's objects may take. kube-controller-manager's garbage collector
 * watches a custom resource from its next discovery (every 30 s) when the CRD came after it started, as the
 * world's CRDs may; once watched, it collects in well under a second.
 */
const COLLECTED_WITHIN_MS = 45_000;
let world: ReconcileWorld;

beforeAll(async () => {
  world = await startReconcileWorld();
});
afterAll(async () => {
  await world?.stop();
});

// ---- helpers -------------------------------------------------------------------------------------

async function read(
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): Promise<KubeObject | undefined> {
  try {
    return await world.admin.readJson<KubeObject>({ apiVersion, kind, metadata: { name, namespace } });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
const poolSpirit = (pool: string) => read('poolspirit.io/v1alpha1', 'PoolSpirit', pool);

/** Every object rendered for a pool, as [apiVersion, kind, name, namespace]. */
function ownedRefs(pool: string): [string, string, string, string | undefined][] {
  const base = `ps-${pool}`;
  return [
    ['v1', 'Secret', `${base}-ca`, NS],
    ['v1', 'Secret', `${base}-pki`, NS],
    ['v1', 'Secret', `${base}-agent`, NS],
    ['v1', 'ConfigMap', `${base}-bootstrap`, NS],
    ['v1', 'ServiceAccount', base, NS],
    ['v1', 'Service', base, NS],
    ['apps/v1', 'Deployment', base, NS],
  ];
}

/**
 * Writes the reconciler made since `mark`, as `resource[/subresource]` → count. The real control plane's log
 * holds the reconciler's identity only; the local API's holds every client, so the test's own managers (and
 * its IP allocator) are left out by name.
 */
async function writesByResource(mark: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const r of await world.requestLog.writesSince(mark)) {
    if (r.fieldManager === IP_ALLOCATOR || r.fieldManager === 'test-setup' || r.fieldManager === 'operator') continue;
    const key = r.subresource ? `${r.resource}/${r.subresource}` : String(r.resource);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** What of an object only a writer of it changes: the Deployment's spec generation (its controller writes its status), else the resourceVersion. */
const writtenAs = (o: KubeObject | undefined) =>
  o?.kind === 'Deployment' ? `generation ${o.metadata.generation}` : o?.metadata.resourceVersion;

/** Writes other than the PoolSpirit's status: what a pass that re-rendered nothing must not make. */
const renderWrites = (writes: RequestRecord[]) =>
  writes.filter((r) => !(r.resource === 'poolspirits' && r.subresource === 'status'));

async function operatorApplySpec(pool: string, spec: Record<string, unknown>) {
  return world.admin.applyJson(
    {
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: pool },
      spec: { nodePool: pool, ...spec },
    } as KubernetesObject,
    'operator',
    true,
  );
}

function secretFile(secret: KubeObject | undefined, key: string): string {
  const data = secret?.data as Record<string, string> | undefined;
  if (!data?.[key]) throw new Error(`secret ${secret?.metadata.name} has no ${key}`);
  return Buffer.from(data[key], 'base64').toString('utf8');
}

function condition(ps: KubeObject | undefined, type: string) {
  const conditions = (
    ps?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined
  )?.conditions;
  return conditions?.find((c) => c.type === type);
}

// ---- tests ---------------------------------------------------------------------------------------

describe('reconcile (end to end on the built control plane + dynalite)', () => {
  it('gives a new edge NodePool a PoolSpirit and every rendered object, with the properties that matter', async () => {
    const nodePool = await world.createNodePool('edge-a', { type: 'Edge' });
    const mark = await world.requestLog.mark();
    const result = await world.invoke('edge-a', { via: 'notice' });
    expect(result).toMatchObject({ result: 'applied', passes: 1, tableWriteUnits: 2 });

    // PoolSpirit: created from fleet defaults, owned by its NodePool.
    const ps = await poolSpirit('edge-a');
    expect(ps?.spec).toEqual({ nodePool: 'edge-a' });
    expect(ps?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'NodePool', name: 'edge-a', uid: nodePool.metadata.uid, controller: true }),
    ]);
    for (const [apiVersion, kind, name, namespace] of ownedRefs('edge-a')) {
      const obj = await read(apiVersion, kind, name, namespace);
      expect(obj, `${kind} ${name}`).toBeDefined();
      // The pool CA outlives a deleted PoolSpirit: it goes with the NodePool.
      const owner =
        name === 'ps-edge-a-ca'
          ? { kind: 'NodePool', uid: nodePool.metadata.uid }
          : { kind: 'PoolSpirit', uid: ps!.metadata.uid };
      expect(obj!.metadata.ownerReferences, `${kind} ${name} owner`).toEqual([
        expect.objectContaining({ ...owner, name: 'edge-a', controller: true }),
      ]);
    }
    // Writes: one apply per object + the PoolSpirit and one status write — the minimum; nothing twice. No
    // RBAC object (the agents' rights are static): 9 writes, 4 fewer than when each pool got a Role,
    // RoleBinding, ClusterRole and ClusterRoleBinding.
    expect(await writesByResource(mark)).toEqual({
      poolspirits: 1,
      'poolspirits/status': 1,
      secrets: 3,
      configmaps: 1,
      serviceaccounts: 1,
      services: 1,
      deployments: 1,
    });

    // Workload: etcd data in memory with a size limit, Recreate, pinned to the pool.
    const deployment = await read('apps/v1', 'Deployment', 'ps-edge-a', NS);
    const podSpec = (deployment!.spec as { template: { spec: Record<string, any> } }).template.spec;
    expect(podSpec.volumes.find((v: { name: string }) => v.name === 'etcd-data').emptyDir).toEqual({
      medium: 'Memory',
      sizeLimit: '1Gi',
    });
    expect((deployment!.spec as { strategy: unknown }).strategy).toEqual({ type: 'Recreate' });
    expect(JSON.stringify(podSpec.affinity)).toContain(
      '"key":"apps.openyurt.io/nodepool","operator":"In","values":["edge-a"]',
    );
    expect(podSpec.tolerations.every((t: { key?: string }) => t.key)).toBe(true); // scoped, never "tolerate everything"
    const etcdArgs: string[] = podSpec.containers.find((c: { name: string }) => c.name === 'etcd').args;
    expect(etcdArgs).toEqual(
      expect.arrayContaining(['--quota-backend-bytes=536870912', '--auto-compaction-mode=periodic']),
    );

    // PKI: the serving certificate's SANs, parsed from the certificate itself.
    const service = await read('v1', 'Service', 'ps-edge-a', NS);
    const clusterIP = (service!.spec as { clusterIP: string }).clusterIP;
    expect(clusterIP).toMatch(/^10\.96\./);
    const pki = await read('v1', 'Secret', 'ps-edge-a-pki', NS);
    const serving = new x509.X509Certificate(secretFile(pki, 'apiserver.crt'));
    const san = serving.getExtension(x509.SubjectAlternativeNameExtension)!;
    const sanValues = san.names.items.map((n) => n.value);
    expect(sanValues).toEqual(
      expect.arrayContaining([
        '127.0.0.1',
        'localhost',
        clusterIP,
        'ps-edge-a',
        `ps-edge-a.${NS}`,
        `ps-edge-a.${NS}.svc`,
        `ps-edge-a.${NS}.svc.cluster.local`,
      ]),
    );
    const etcdServing = new x509.X509Certificate(secretFile(pki, 'etcd-server.crt'));
    expect(etcdServing.getExtension(x509.SubjectAlternativeNameExtension)!.names.items.map((n) => n.value)).toContain(
      '127.0.0.1',
    );
    // YurtHubs authenticate with node certificates: the cluster CA is the client CA.
    expect(secretFile(pki, 'client-ca.crt')).toContain(world.clusterCaPem.trim());

    // RBAC: none per pool — the agent's ServiceAccount gets its rights from infra/cluster/agent/rbac.yaml.
    expect(await read('rbac.authorization.k8s.io/v1', 'Role', 'ps-edge-a-agent', NS)).toBeUndefined();
    expect(await read('rbac.authorization.k8s.io/v1', 'ClusterRole', 'poolspirit:agent:edge-a')).toBeUndefined();

    // Bootstrap: NodePool CRD, system:nodes → poolspirit:yurthub, kube-system namespace, and a content hash.
    const bootstrap = await read('v1', 'ConfigMap', 'ps-edge-a-bootstrap', NS);
    const data = bootstrap!.data as Record<string, string>;
    const manifests = parseAllDocuments(data['manifests.yaml']).map((d) => d.toJSON());
    expect(manifests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'Namespace', metadata: expect.objectContaining({ name: 'kube-system' }) }),
        expect.objectContaining({
          kind: 'CustomResourceDefinition',
          metadata: expect.objectContaining({ name: 'nodepools.apps.openyurt.io' }),
        }),
        expect.objectContaining({
          kind: 'ClusterRoleBinding',
          roleRef: expect.objectContaining({ kind: 'ClusterRole', name: 'poolspirit:yurthub' }),
          subjects: [expect.objectContaining({ kind: 'Group', name: 'system:nodes' })],
        }),
      ]),
    );
    expect(data.hash).toMatch(/^[0-9a-f]{64}$/);

    // Status and the table record.
    const withStatus = await poolSpirit('edge-a');
    expect((withStatus!.status as { observedGeneration: number }).observedGeneration).toBe(1);
    expect(condition(withStatus, 'CertificatesReady')).toMatchObject({ status: 'True' });
    expect(condition(withStatus, 'Available')).toMatchObject({ status: 'False' });
    const state = await readPoolState(world.table, CLUSTER_ID, 'edge-a');
    expect(state).toMatchObject({ outcome: 'applied', observedGeneration: 1, attempts: 1, failures: 0 });
    expect(state!.desiredHash).toMatch(/^[0-9a-f]{64}$/);
    expect(world.metricsOut.at(-1)).toMatchObject({ TableWriteUnits: 2, ClusterWrites: result.clusterWrites });
  });

  it("lists a pool's objects by label through the adapter (as audits do)", async () => {
    const registration = await getCluster(world.table, CLUSTER_ID);
    const client = world.deps.clusterClient(await world.deps.clusterAccess.connectionFor(registration!), CLUSTER_ID);
    const secrets = await client.listByLabel('v1', 'Secret', NS, { 'poolspirit.io/pool': 'edge-a' });
    expect(secrets.map((s) => s.metadata.name).sort()).toEqual(['ps-edge-a-agent', 'ps-edge-a-ca', 'ps-edge-a-pki']);
    expect(secrets.every((s) => s.kind === 'Secret')).toBe(true);
    expect((await client.listNodePools()).map((p) => p.metadata.name)).toContain('edge-a');
    expect(client.counters.writes).toBe(0);
  });

  it('makes zero cluster writes when nothing changed, and 2 table write units', async () => {
    await world.settle('edge-a');
    const mark = await world.requestLog.mark();
    const result = await world.invoke('edge-a');
    expect(result).toMatchObject({ result: 'unchanged', clusterWrites: 0, tableWriteUnits: 2 });
    expect(await world.requestLog.writesSince(mark)).toEqual([]);
  });

  it('does no work twice for a duplicate event id', async () => {
    await world.settle('edge-a');
    const first = await world.invoke('edge-a', { eventId: 'dup-1' });
    const mark = await world.requestLog.mark();
    const second = await world.invoke('edge-a', { eventId: 'dup-1' });
    expect(first.result).toBe('unchanged');
    expect(second).toMatchObject({ result: 'duplicate', clusterWrites: 0 });
    expect(await world.requestLog.since(mark)).toEqual([]); // not even a read
  });

  it('serves a notice the bus accepted before a completed pass began: no cluster request, no table write', async () => {
    await world.settle('edge-a');
    const pass = await world.invoke('edge-a');
    expect(pass.result).toBe('unchanged');
    const passStartedAt = (await getItem(world.table, keys.pool(CLUSTER_ID, 'edge-a')))?.servedFrom as number;
    expect(passStartedAt).toBeGreaterThan(0);
    const mark = await world.requestLog.mark();
    const writesBefore = world.tableWrites.length;
    // Accepted 3 s before that pass began: beyond the 2 s the bus's whole-second time and clocks may be off.
    const old = await world.invoke('edge-a', { via: 'notice', time: new Date(passStartedAt - 3_000) });
    expect(old).toMatchObject({ result: 'served', clusterWrites: 0, tableWriteUnits: 0 });
    expect(await world.requestLog.since(mark)).toEqual([]); // not even a read
    expect(world.tableWrites.slice(writesBefore)).toEqual([]);
    // Within the margin it may name a change the pass did not see: it runs.
    const recent = await world.invoke('edge-a', { via: 'notice', time: new Date(passStartedAt - 500) });
    expect(recent.result).toBe('unchanged');
    expect((await world.requestLog.since(mark)).length).toBeGreaterThan(0);
  });

  it('changes only the affected object when one spec field changes', async () => {
    const before = await read('v1', 'Secret', 'ps-edge-a-pki', NS);
    await operatorApplySpec('edge-a', { apiServer: { extraArgs: { v: '2' } } });
    const mark = await world.requestLog.mark();
    const result = await world.invoke('edge-a');
    expect(result.result).toBe('applied');
    const { events = 0, ...rest } = await writesByResource(mark);
    expect(rest).toEqual({ deployments: 1, 'poolspirits/status': 1 });
    expect(events).toBe(0);
    const deployment = await read('apps/v1', 'Deployment', 'ps-edge-a', NS);
    const apiserver = (deployment!.spec as any).template.spec.containers.find(
      (c: { name: string }) => c.name === 'kube-apiserver',
    );
    expect(apiserver.args).toContain('--v=2');
    expect((await read('v1', 'Secret', 'ps-edge-a-pki', NS))!.metadata.resourceVersion).toBe(
      before!.metadata.resourceVersion,
    );
    expect((await poolSpirit('edge-a'))!.status).toMatchObject({ observedGeneration: 2 });
  });

  it('reports an invalid spec on the Invalid condition naming the field, and touches nothing else', async () => {
    const liveBefore = await Promise.all(ownedRefs('edge-a').map(([a, k, n, ns]) => read(a, k, n, ns)));
    await operatorApplySpec('edge-a', {
      apiServer: { extraArgs: { v: '2' } },
      etcd: { extraArgs: { 'data-dir': '/tmp/etcd' } },
    });
    const mark = await world.requestLog.mark();
    const result = await world.invoke('edge-a');
    expect(result.result).toBe('invalid');
    const { events = 0, ...rest } = await writesByResource(mark);
    expect(rest).toEqual({ 'poolspirits/status': 1 });
    expect(events).toBe(1); // InvalidSpec warning
    const ps = await poolSpirit('edge-a');
    expect(ps!.status).toMatchObject({ phase: 'Invalid', observedGeneration: 3 });
    expect(condition(ps, 'Available')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(condition(ps, 'Available')!.message).toContain('spec.etcd.extraArgs.data-dir');
    const liveAfter = await Promise.all(ownedRefs('edge-a').map(([a, k, n, ns]) => read(a, k, n, ns)));
    expect(liveAfter.map(writtenAs)).toEqual(liveBefore.map(writtenAs));

    // Still invalid, nothing new to say: zero writes.
    const again = await world.requestLog.mark();
    await world.invoke('edge-a');
    expect(await world.requestLog.writesSince(again)).toEqual([]);

    // A bundle that does not exist passes the CRD schema but not the reconciler, which names the field.
    await operatorApplySpec('edge-a', { version: '9.9.9' });
    await world.invoke('edge-a');
    expect(condition(await poolSpirit('edge-a'), 'Available')!.message).toContain('spec.version');

    // What the CRD schema can check never reaches the reconciler: the API refuses it and names the field.
    await expect(operatorApplySpec('edge-a', { etcd: { storage: { sizeLimit: 'lots' } } })).rejects.toMatchObject({
      body: expect.objectContaining({ message: expect.stringContaining('spec.etcd.storage.sizeLimit') }),
    });
    await expect(operatorApplySpec('edge-a', { apiServer: { bogus: '1' } })).rejects.toMatchObject({
      body: expect.objectContaining({ message: expect.stringContaining('.spec.apiServer.bogus') }),
    });

    // Back to a valid spec: converges again.
    await operatorApplySpec('edge-a', { apiServer: { extraArgs: { v: '2' } } });
    expect((await world.invoke('edge-a')).result).toBe('applied');
    expect((await poolSpirit('edge-a'))!.status).toMatchObject({ phase: 'Provisioning' });
  });

  it('leaves the rendered objects alone while paused, and reports Paused', async () => {
    await operatorApplySpec('edge-a', { apiServer: { extraArgs: { v: '3' } }, paused: true });
    const mark = await world.requestLog.mark();
    expect((await world.invoke('edge-a')).result).toBe('paused');
    const { events = 0, ...rest } = await writesByResource(mark);
    expect(rest).toEqual({ 'poolspirits/status': 1 });
    expect(events).toBe(1); // "Paused"
    expect((await poolSpirit('edge-a'))!.status).toMatchObject({ phase: 'Paused' });
    const args = (d: KubeObject | undefined) =>
      (d!.spec as any).template.spec.containers.find((c: { name: string }) => c.name === 'kube-apiserver').args;
    expect(args(await read('apps/v1', 'Deployment', 'ps-edge-a', NS))).toContain('--v=2');
    await operatorApplySpec('edge-a', { apiServer: { extraArgs: { v: '3' } } });
    expect((await world.invoke('edge-a')).result).toBe('applied');
    expect(args(await read('apps/v1', 'Deployment', 'ps-edge-a', NS))).toContain('--v=3');
  });

  it('does not rewrite the status for a message that only moved with time (no self-triggered loop)', async () => {
    // The agent reports a leader whose Lease renewal is long past (stale), with its own field manager.
    const renewTime = new Date(Date.now() - 10 * 60_000).toISOString();
    // KubernetesObjectApi has no subresource parameter: apply the agent's status with a plain request.
    const applied = await world.admin.requestJson<KubeObject>(
      HttpMethod.PATCH,
      '/apis/poolspirit.io/v1alpha1/poolspirits/edge-a/status',
      {
        query: { fieldManager: 'pool-spirit-agent', force: 'true' },
        contentType: 'application/apply-patch+yaml',
        body: {
          apiVersion: 'poolspirit.io/v1alpha1',
          kind: 'PoolSpirit',
          metadata: { name: 'edge-a' },
          status: { leader: { holder: 'node-1', renewTime } },
        },
      },
    );
    expect((applied.status as { leader?: { holder?: string } }).leader?.holder).toBe('node-1');
    await world.invoke('edge-a');
    const stale = condition(await poolSpirit('edge-a'), 'LeaderElected');
    expect(stale).toMatchObject({ status: 'False', reason: 'LeaderStale' });
    await world.settle('edge-a');
    world.clockOffsetMs = 5_000; // the "renewed Ns ago" message moves on
    try {
      const mark = await world.requestLog.mark();
      expect((await world.invoke('edge-a')).result).toBe('unchanged');
      expect(await world.requestLog.writesSince(mark)).toEqual([]);
    } finally {
      world.clockOffsetMs = 0;
    }
  });

  it('never deletes a PoolSpirit it did not create', async () => {
    await world.createNodePool('cloud-hand', { type: 'Cloud' });
    await world.admin.createJson({
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: 'cloud-hand' },
      spec: { nodePool: 'cloud-hand' },
    } as KubernetesObject);
    const mark = await world.requestLog.mark();
    expect((await world.invoke('cloud-hand')).result).toBe('not-edge');
    expect(await world.requestLog.writesSince(mark)).toEqual([]);
    expect(await poolSpirit('cloud-hand')).toBeDefined();
  });

  it('gives a Cloud pool nothing, and an opted-out pool nothing', async () => {
    await world.createNodePool('cloud-a', { type: 'Cloud' });
    await world.createNodePool('edge-out', { type: 'Edge', annotations: { 'poolspirit.io/disabled': 'true' } });
    const mark = await world.requestLog.mark();
    expect((await world.invoke('cloud-a')).result).toBe('not-edge');
    expect((await world.invoke('edge-out')).result).toBe('not-edge');
    expect(await world.requestLog.writesSince(mark)).toEqual([]);
    expect(await poolSpirit('cloud-a')).toBeUndefined();
    expect(await poolSpirit('edge-out')).toBeUndefined();
  });

  it('understands the pool-type label, and removes what it created when a pool opts out', async () => {
    await world.createNodePool('edge-label', { labels: { 'openyurt.io/node-pool-type': 'edge' } });
    expect((await world.invoke('edge-label')).result).toBe('applied');
    expect(await poolSpirit('edge-label')).toBeDefined();
    await world.admin.applyJson(
      {
        apiVersion: 'apps.openyurt.io/v1beta2',
        kind: 'NodePool',
        metadata: { name: 'edge-label', annotations: { 'poolspirit.io/disabled': 'true' } },
      } as KubernetesObject,
      'operator',
      true,
    );
    expect((await world.invoke('edge-label')).result).toBe('not-edge');
    await vi.waitFor(
      async () => {
        for (const [a, k, n, ns] of [
          ['poolspirit.io/v1alpha1', 'PoolSpirit', 'edge-label', undefined] as const,
          ...ownedRefs('edge-label'),
        ]) {
          expect(await read(a, k, n, ns), `${k} ${n}`).toBeUndefined();
        }
      },
      { timeout: COLLECTED_WITHIN_MS, interval: 50 },
    );
  });

  it('leaves nothing behind when the NodePool is deleted', async () => {
    await world.createNodePool('edge-del', { type: 'Edge' });
    await world.invoke('edge-del');
    expect(await poolSpirit('edge-del')).toBeDefined();
    await world.admin.delete({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: 'edge-del' },
    });
    await vi.waitFor(
      async () => {
        for (const [a, k, n, ns] of [
          ['poolspirit.io/v1alpha1', 'PoolSpirit', 'edge-del', undefined] as const,
          ...ownedRefs('edge-del'),
        ]) {
          expect(await read(a, k, n, ns), `${k} ${n}`).toBeUndefined();
        }
      },
      { timeout: COLLECTED_WITHIN_MS, interval: 50 },
    );
    const mark = await world.requestLog.mark();
    expect((await world.invoke('edge-del')).result).toBe('gone');
    expect(await world.requestLog.writesSince(mark)).toEqual([]);
    const item = await getItem(world.table, keys.pool(CLUSTER_ID, 'edge-del'));
    expect(item?.expiresAt).toBeGreaterThan(Date.now() / 1000); // the record ages out by TTL
  });

  it('requeues a pool whose earlier PoolSpirit is still being collected, records it as requeued (not a failure), and creates the new one once it is gone', async () => {
    await world.createNodePool('edge-regen', { type: 'Edge' });
    await world.invoke('edge-regen');
    const first = await poolSpirit('edge-regen');
    const hold = {
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: 'edge-regen', finalizers: ['test.poolspirit.io/hold'] },
    };
    await world.admin.applyJson(hold as KubernetesObject, 'operator', true);
    await world.admin.delete({
      apiVersion: 'poolspirit.io/v1alpha1',
      kind: 'PoolSpirit',
      metadata: { name: 'edge-regen' },
    });
    expect((await poolSpirit('edge-regen'))?.metadata.deletionTimestamp).toBeDefined();

    const mark = await world.requestLog.mark();
    const err = await world.invoke('edge-regen').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).message).toContain('being deleted');
    // Counted where the errors alarm looks for it (serverless.yml subtracts it from Lambda's Errors).
    // (its only dimension is the service; the deployed value is checked against the alarm in the packaging test).
    expect(world.metricsOut.at(-1)).toMatchObject({
      ReconcileRequeues: 1,
      _aws: { CloudWatchMetrics: [{ Dimensions: [['service']] }] },
    });
    expect((err as RequeueError).afterMs).toBeGreaterThan(0);
    expect(await world.requestLog.writesSince(mark)).toEqual([]);
    const state = await readPoolState(world.table, CLUSTER_ID, 'edge-regen');
    expect(state?.outcome).toBe('requeued');
    expect(state?.failures).toBe(0);

    // The finalizer goes (the operator's apply without it), collection completes, the next pass creates anew.
    await world.admin.applyJson({ ...hold, metadata: { name: 'edge-regen' } } as KubernetesObject, 'operator', true);
    await vi.waitFor(async () => expect(await poolSpirit('edge-regen')).toBeUndefined(), {
      timeout: COLLECTED_WITHIN_MS,
      interval: 50,
    });
    expect((await world.invoke('edge-regen')).result).toBe('applied');
    const second = await poolSpirit('edge-regen');
    expect(second?.metadata.uid).toBeDefined();
    expect(second?.metadata.uid).not.toBe(first?.metadata.uid);
  });

  it('lets one of two concurrent invocations reconcile; the other waits for the lease and finds nothing left to do', async () => {
    await world.createNodePool('edge-race', { type: 'Edge' });
    const results = await Promise.all([world.invoke('edge-race'), world.invoke('edge-race')]);
    // Neither fails to a platform retry: the holder was done within the wait (functions/reconcile/run.ts).
    const [holder, waiter] = [...results].sort((a, b) => b.applied.length - a.applied.length);
    expect(holder).toMatchObject({ result: 'applied', applied: expect.arrayContaining(['PoolSpirit edge-race']) });
    // The one that waited rendered nothing: each object was written once, not twice. (On the real control
    // plane the Deployment's controller may have moved its status meanwhile: a status write is news.)
    expect(waiter?.applied).toEqual([]);
    expect(waiter?.clusterWrites).toBeLessThanOrEqual(1);
  });

  it('requeues a notice whose pool is still held after the wait, to look again; a live holder has served it meanwhile', async () => {
    await world.createNodePool('edge-slow', { type: 'Edge' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    world.wrapClient = (client: ClusterClient) => ({
      ...client,
      async apply(obj) {
        if (obj.kind === 'Secret') await gate; // a live holder slower than the wait
        return client.apply(obj);
      },
    });
    const holder = world.invoke('edge-slow');
    await vi.waitFor(async () => expect(await read('v1', 'Service', 'ps-edge-slow', NS)).toBeDefined(), {
      timeout: 10_000,
      interval: 20,
    });
    world.wrapClient = undefined;
    const info = vi.spyOn(world.deps.logger, 'info');
    const err = await world.invoke('edge-slow', { via: 'notice' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not acknowledged: a holder that died would never run the pass it was asked for (dead-lease-holder test).
    expect(err).toBeInstanceOf(RequeueError);
    expect((err as RequeueError).afterMs).toBeGreaterThan(0);
    expect((err as RequeueError).afterMs).toBeLessThanOrEqual(LOCKED_RECHECK_MS);
    expect(info.mock.calls.some(([message]) => String(message).includes('; requeued'))).toBe(true);
    info.mockRestore();
    release();
    // The live holder ran one more pass for the notice.
    expect((await holder).passes).toBe(2);
    // The redelivery finds the pool converged: nothing to render (the controllers' progress may be news for
    // the status).
    const mark = await world.requestLog.mark();
    expect((await world.invoke('edge-slow', { via: 'notice' })).applied).toEqual([]);
    expect(renderWrites(await world.requestLog.writesSince(mark))).toEqual([]);
  });

  it('completes the set on the next invocation after a function failed between two applies', async () => {
    await world.createNodePool('edge-crash', { type: 'Edge' });
    let applies = 0;
    world.wrapClient = (client: ClusterClient) => ({
      ...client,
      async apply(obj) {
        if (obj.kind !== 'PoolSpirit' && ++applies === 2)
          throw new Error('injected: function killed between two applies');
        return client.apply(obj);
      },
    });
    await expect(world.invoke('edge-crash')).rejects.toThrow('injected: function killed');
    world.wrapClient = undefined;
    const crashed = await readPoolState(world.table, CLUSTER_ID, 'edge-crash');
    expect(crashed).toMatchObject({
      outcome: 'error',
      failures: 1,
      lastError: 'injected: function killed between two applies',
    });

    const mark = await world.requestLog.mark();
    const result = await world.invoke('edge-crash');
    expect(result.result).toBe('applied');
    const { events = 0, ...rest } = await writesByResource(mark);
    // The Service landed before the failure, so only the rest is written now.
    expect(rest.services).toBeUndefined();
    expect(rest.deployments).toBe(1);
    for (const [a, k, n, ns] of ownedRefs('edge-crash')) expect(await read(a, k, n, ns), `${k} ${n}`).toBeDefined();
    expect(await readPoolState(world.table, CLUSTER_ID, 'edge-crash')).toMatchObject({
      outcome: 'applied',
      failures: 0,
    });
    void events;
  });

  it('takes over from a function that died holding the lease, once the lease lapses; the dead one is fenced out', async () => {
    await world.createNodePool('edge-hang', { type: 'Edge' });
    let release!: (err: Error) => void;
    const stuck = new Promise<never>((_, reject) => (release = reject));
    world.wrapClient = (client: ClusterClient) => ({
      ...client,
      async apply(obj) {
        if (obj.kind === 'Secret') return stuck; // frozen mid-apply, as a killed or timed-out function
        return client.apply(obj);
      },
    });
    const frozen = world.invoke('edge-hang');
    await vi.waitFor(async () => expect(await read('v1', 'Service', 'ps-edge-hang', NS)).toBeDefined(), {
      timeout: 10_000,
      interval: 20,
    });
    world.wrapClient = undefined;

    // While the lease is held, others are requeued (not acknowledged).
    await expect(world.invoke('edge-hang')).rejects.toBeInstanceOf(RequeueError);
    // After the lease lapses, the next invocation takes over and completes the set.
    world.clockOffsetMs = world.deps.leaseTtlMs + 1_000;
    try {
      expect((await world.invoke('edge-hang')).result).toBe('applied');
    } finally {
      world.clockOffsetMs = 0;
    }
    for (const [a, k, n, ns] of ownedRefs('edge-hang')) expect(await read(a, k, n, ns), `${k} ${n}`).toBeDefined();
    // The frozen invocation wakes up: its outcome write is rejected by the fencing token.
    release(new Error('timed out'));
    await expect(frozen).rejects.toThrow('timed out');
    expect(await readPoolState(world.table, CLUSTER_ID, 'edge-hang')).toMatchObject({
      outcome: 'applied',
      failures: 0,
    });
  });

  it('rejects a malformed event, naming the field', async () => {
    const event = world.reconcileRequestEvent('edge-a') as { detail: Record<string, unknown> };
    delete event.detail.nodePool;
    const { lambdaContext } = await import('./harness.ts');
    const { createReconcileHandler } = await import('../../../functions/reconcile/handler.ts');
    await expect(createReconcileHandler(world.deps)(event, lambdaContext('x'))).rejects.toThrow(/detail\.nodePool/);
  });
});
