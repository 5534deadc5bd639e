/**
 * The reconcile converges the kube-system objects YurtHubs of compat pools read
 * (functions/yurt-coordinator/cluster-objects.ts), on the built control plane with the shipped RBAC: a missing install is a condition, not a retry loop; the
 * certs Secret and the two EndpointSlices hold every compat pool, written only when they change; and two
 * pools reconciled at once cannot drop each other, because every write carries the resourceVersion read
 * before the pools were listed. A negative control runs the same interleaving without that precondition and
 * loses a pool.
 */

import { HttpMethod, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { statusOf } from '../../../adapters/kubernetes/index.ts';
import { getCluster, registerCluster } from '../../../adapters/state-table/index.ts';
import { auditCluster } from '../../../core/audit/index.ts';
import { DEFAULT_NAMESPACE, fieldDiffs, type KubeObject } from '../../../core/index.ts';
import { PKI_FILES } from '../../../core/render/pki.ts';
import {
  CERTS_SECRET,
  COMPAT_COMPONENT_PATH,
  COMPAT_LABEL,
  COMPAT_VALUE,
} from '../../../core/yurt-coordinator/index.ts';
import { productManifests } from '../../../dev/local/real-cluster/install.ts';
import { auditDeps } from '../../../functions/audit/handler.ts';
import { observeCluster } from '../../../functions/audit/observe.ts';
import { restrictedPod } from '../../support/restricted-pod.ts';
import { CLUSTER_ID, type ReconcileWorld, startReconcileWorld } from '../reconcile/harness.ts';

const NS = DEFAULT_NAMESPACE;
const COMPAT = { [COMPAT_LABEL]: COMPAT_VALUE };
let world: ReconcileWorld;

beforeAll(async () => {
  world = await startReconcileWorld();
});
afterAll(async () => {
  await world?.stop();
});

async function read(apiVersion: string, kind: string, name: string, namespace?: string) {
  try {
    return await world.admin.readJson<KubeObject>({ apiVersion, kind, metadata: { name, namespace } });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
const unb64 = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');
const bundle = async () =>
  unb64(((await read('v1', 'Secret', CERTS_SECRET, 'kube-system'))?.data as Record<string, string>)?.['ca.crt']);
const sliceIPs = async (name: string) =>
  (
    ((await read('discovery.k8s.io/v1', 'EndpointSlice', name, 'kube-system'))?.endpoints ?? []) as Array<{
      addresses: string[];
    }>
  ).map((e) => e.addresses[0]);
async function casOf(pool: string): Promise<string[]> {
  const data = (await read('v1', 'Secret', `ps-${pool}-ca`, NS))!.data as Record<string, string>;
  return [unb64(data[PKI_FILES.caCert]).trim(), unb64(data[PKI_FILES.etcdCaCert]).trim()];
}
function condition(obj: KubeObject | undefined) {
  const conditions = (obj?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? [];
  return conditions.find((c) => c.type === 'YurtCoordinatorObjectsReady');
}
const poolSpirit = (pool: string) => read('poolspirit.io/v1alpha1', 'PoolSpirit', pool);

/** What the audit function observes of the cluster, as the reconciler's identity. */
async function observe() {
  const registration = await getCluster(world.table, CLUSTER_ID);
  if (!registration) throw new Error(`cluster ${CLUSTER_ID} is not registered`);
  const client = world.deps.clusterClient(await world.deps.clusterAccess.connectionFor(registration), CLUSTER_ID);
  return observeCluster(auditDeps({ table: world.table }), CLUSTER_ID, client);
}

/** What a kubelet and a CNI report for a running pool-spirit pod of `pool` on `<pool>-node-0`. */
async function runPod(pool: string, ip: string): Promise<void> {
  const name = `ps-${pool}-x`;
  const labels = { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': pool };
  await world.admin.createJson(
    restrictedPod({ name, namespace: NS, labels, nodeName: `${pool}-node-0` }) as KubernetesObject,
  );
  await world.admin.requestJson(HttpMethod.PATCH, `/api/v1/namespaces/${NS}/pods/${name}/status`, {
    body: { status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] } },
    contentType: 'application/merge-patch+json',
  });
}

/**
 * The component as an operator installs it: infra/cluster with the component, built by kustomize and
 * applied (its kube-system objects, and the Role and RoleBinding that let the reconciler write them).
 */
async function installComponent(): Promise<void> {
  for (const obj of await productManifests([COMPAT_COMPONENT_PATH])) {
    if (obj.kind !== 'Deployment') await world.admin.applyJson(obj, 'operator', true);
  }
}

describe('without the yurt-coordinator-compat component', () => {
  it('converges the pool, says in a condition what to apply, and does not retry', async () => {
    await world.createNodePool('edge-a', { type: 'Edge', labels: COMPAT });
    const first = await world.invoke('edge-a');
    expect(first.result).toBe('applied');
    expect(await read('apps/v1', 'Deployment', 'ps-edge-a', NS)).toBeDefined();
    const c = condition(await poolSpirit('edge-a'));
    expect(c).toMatchObject({ status: 'False', reason: 'NotInstalled' });
    expect(c?.message).toContain(COMPAT_COMPONENT_PATH);
    // Without the component the reconciler holds no Role in kube-system: the API refuses the reads.
    expect(c?.message).toContain('Secret yurt-coordinator-yurthub-certs (403)');
    expect(c?.message).toContain('Service yurt-coordinator-apiserver (403)');
    // Not an error, so not a platform retry; and a second pass finds nothing to write.
    const again = await world.invoke('edge-a');
    expect(again).toMatchObject({ result: 'unchanged', clusterWrites: 0 });
  });
});

describe('with the component installed', () => {
  beforeAll(async () => {
    await installComponent();
    await world.createNodePool('edge-b', { type: 'Edge', labels: COMPAT });
    await runPod('edge-a', '10.244.1.5');
    await runPod('edge-b', '10.244.2.5');
    await world.invoke('edge-b');
    // The operator asks for a reconcile once the component is in (docs/yurthub.md).
    await world.invoke('edge-a');
  });

  it('fills the certs Secret and both slices with every compat pool, and reports it', async () => {
    const text = await bundle();
    const [aCa, aEtcd, bCa, bEtcd] = [...(await casOf('edge-a')), ...(await casOf('edge-b'))];
    expect([aCa, aEtcd, bCa, bEtcd].map((ca) => text.indexOf(ca!))).toEqual(
      [...[aCa, aEtcd, bCa, bEtcd].map((ca) => text.indexOf(ca!))].sort((x, y) => x - y),
    );
    expect(text.match(/BEGIN CERTIFICATE/g)).toHaveLength(4);
    expect(await sliceIPs('yurt-coordinator-apiserver')).toEqual(['10.244.1.5', '10.244.2.5']);
    expect(await sliceIPs('yurt-coordinator-etcd')).toEqual(['10.244.1.5', '10.244.2.5']);
    for (const pool of ['edge-a', 'edge-b']) {
      expect(condition(await poolSpirit(pool))).toMatchObject({ status: 'True', reason: 'Applied' });
    }
  });

  it('the audit renders each compat pool as the reconcile did (its coordinator material), so it finds no drift', async () => {
    const observed = await observe();
    for (const pool of ['edge-a', 'edge-b']) {
      const desired = observed.desired[pool];
      expect(desired && 'error' in desired ? desired.error : undefined, pool).toBeUndefined();
      const rendered = desired && 'objects' in desired ? desired.objects : [];
      const deployment = rendered.find((o) => o.kind === 'Deployment');
      const live = await read('apps/v1', 'Deployment', `ps-${pool}`, NS);
      // What the audit's drift check compares: every field the render sets, as the cluster holds it.
      expect(deployment, pool).toBeDefined();
      expect(fieldDiffs(deployment?.spec, live?.spec), pool).toEqual([]);
    }
  });

  it('writes nothing on a pass that finds them current', async () => {
    for (const pool of ['edge-a', 'edge-b']) {
      await world.settle(pool);
      expect(await world.invoke(pool)).toMatchObject({ result: 'unchanged', clusterWrites: 0 });
    }
  });

  it("takes its keys back from another writer (yurt-manager's cert controller at its start) and names it in the condition", async () => {
    const ours = await bundle();
    // What yurtcoordinatorcert does at start: a strategic-merge patch of ca.crt, field manager yurt-manager.
    const foreignCa = '-----BEGIN CERTIFICATE-----\nbm90IGEgcG9vbC1zcGlyaXQgQ0E=\n-----END CERTIFICATE-----\n';
    await world.admin.requestJson(
      HttpMethod.PATCH,
      `/api/v1/namespaces/kube-system/secrets/${CERTS_SECRET}?fieldManager=yurt-manager`,
      {
        body: { data: { 'ca.crt': Buffer.from(foreignCa).toString('base64') } },
        contentType: 'application/strategic-merge-patch+json',
      },
    );
    expect(await bundle()).toBe(foreignCa);
    // The audit sees it meanwhile, on every compat pool, and a reconcile it requests is the repair.
    const seen = auditCluster(await observe(), { now: new Date() }).findings.filter((f) => f.kind === 'foreign-writer');
    expect(seen.map((f) => [f.pool, f.fixable])).toEqual([
      ['edge-a', true],
      ['edge-b', true],
    ]);
    expect(seen[0]?.reason).toMatch(/was written by yurt-manager \(Update, \S+\): ca\.crt: /);
    await world.invoke('edge-a');
    expect(await bundle()).toBe(ours);
    expect(auditCluster(await observe(), { now: new Date() }).findings.map((f) => f.kind)).not.toContain(
      'foreign-writer',
    );
    const c = condition(await poolSpirit('edge-a'));
    expect(c).toMatchObject({ status: 'False', reason: 'ForeignWriter' });
    expect(c?.message).toMatch(
      /^kube-system yurt-coordinator-yurthub-certs was written by yurt-manager \(Update, \S+\): ca\.crt; /,
    );
    expect(c?.message).toContain('--controllers=*,-yurtcoordinatorcert');
    // Taken back, the keys are the product's alone again: the next pass reports Applied and writes no object.
    await world.invoke('edge-a');
    expect(condition(await poolSpirit('edge-a'))).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await world.invoke('edge-a')).toMatchObject({ result: 'unchanged', clusterWrites: 0 });
  });

  it('keeps a pool reconciled between another pass’s read and write: its write fails (409) and is read again', async () => {
    await world.createNodePool('edge-c', { type: 'Edge', labels: COMPAT });
    const failures = await interleave('edge-c', 'edge-d');
    expect(failures).toEqual([409]);
    const text = await bundle();
    for (const pool of ['edge-a', 'edge-b', 'edge-c', 'edge-d'])
      for (const ca of await casOf(pool)) expect(text, `${pool}'s CAs in the bundle`).toContain(ca);
  });

  it('negative control: the same interleaving without the precondition drops the pool reconciled in between', async () => {
    await world.createNodePool('edge-e', { type: 'Edge', labels: COMPAT });
    const failures = await interleave('edge-e', 'edge-f', { dropPrecondition: true });
    expect(failures).toEqual([]);
    const [fCa] = await casOf('edge-f');
    expect(await bundle()).not.toContain(fCa);
    // Level-triggered: the next pass of any compat pool puts it back.
    await world.invoke('edge-a');
    expect(await bundle()).toContain(fCa);
  });

  it('takes a pool out when it leaves compat, and when its NodePool is deleted', async () => {
    const [bCa] = await casOf('edge-b');
    await world.admin.requestJson(HttpMethod.PATCH, '/apis/apps.openyurt.io/v1beta2/nodepools/edge-b', {
      body: { metadata: { labels: { [COMPAT_LABEL]: null } } },
      contentType: 'application/merge-patch+json',
    });
    await world.invoke('edge-b');
    expect(await bundle()).not.toContain(bCa);
    expect(await sliceIPs('yurt-coordinator-apiserver')).toEqual(['10.244.1.5']);
    expect(condition(await poolSpirit('edge-b'))).toBeUndefined();

    const [aCa] = await casOf('edge-a');
    await world.admin.requestJson(HttpMethod.DELETE, '/apis/apps.openyurt.io/v1beta2/nodepools/edge-a');
    expect((await world.invoke('edge-a')).result).toBe('gone');
    expect(await bundle()).not.toContain(aCa);
    expect(await sliceIPs('yurt-coordinator-apiserver')).toEqual([]);
  });
});

describe('where the hubs have no coordinator client', () => {
  const declare = async (openYurtRelease: string | undefined) => {
    const { access } = (await getCluster(world.table, CLUSTER_ID))!;
    await registerCluster(world.table, { id: CLUSTER_ID, access, openYurtRelease }, new Date());
  };
  afterAll(() => declare(undefined));

  it('refuses compat on a cluster registered as OpenYurt v1.6.1, takes the pool in once it says v1.6.0, and out again', async () => {
    await declare('v1.6.1');
    await world.createNodePool('edge-g', { type: 'Edge', labels: COMPAT });
    await world.invoke('edge-g');
    const refused = condition(await poolSpirit('edge-g'));
    expect(refused).toMatchObject({ status: 'False', reason: 'HubsHaveNoCoordinator' });
    expect(refused?.message).toContain(`cluster ${CLUSTER_ID} is registered as OpenYurt v1.6.1`);
    const [gCa] = await casOf('edge-g');
    expect(await bundle()).not.toContain(gCa);
    // Refused cluster-wide: the pools labelled compat before are out of the objects too.
    for (const pool of ['edge-c', 'edge-d'])
      for (const ca of await casOf(pool)) expect(await bundle()).not.toContain(ca);
    await world.settle('edge-g');

    await declare('v1.6.0');
    await world.invoke('edge-g');
    expect(condition(await poolSpirit('edge-g'))).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await bundle()).toContain(gCa);

    await declare('v1.7.0');
    await world.invoke('edge-g');
    expect(condition(await poolSpirit('edge-g'))).toMatchObject({ status: 'False', reason: 'HubsHaveNoCoordinator' });
    expect(await bundle()).not.toContain(gCa);
  });
});

/**
 * Reconciles `first`; when it is about to write the certs Secret (after reading it and listing the pools),
 * creates compat pool `between` and reconciles it to the end, then lets `first` write. Returns the HTTP
 * statuses of `first`'s failed writes to the certs Secret.
 */
async function interleave(
  first: string,
  between: string,
  opts: { dropPrecondition?: boolean } = {},
): Promise<number[]> {
  const failures: number[] = [];
  let armed = true;
  world.wrapClient = (client: ClusterClient): ClusterClient => ({
    ...client,
    async apply(obj) {
      const certs = obj.kind === 'Secret' && obj.metadata.name === CERTS_SECRET;
      if (!certs || !armed) return client.apply(obj);
      armed = false;
      await world.createNodePool(between, { type: 'Edge', labels: COMPAT });
      await world.invoke(between);
      const sent = opts.dropPrecondition ? { ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } } : obj;
      try {
        return await client.apply(sent);
      } catch (err) {
        failures.push(statusOf(err) ?? -1);
        throw err;
      }
    },
  });
  try {
    await world.invoke(first);
  } finally {
    world.wrapClient = undefined;
  }
  return failures;
}
