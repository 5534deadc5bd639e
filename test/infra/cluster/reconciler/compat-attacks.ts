/**
 * The functions' rights in kube-system for yurt-coordinator compat pools (infra/cluster/components/
 * yurt-coordinator-compat, and its admission component), attacked as group pool-spirit:reconciler: only the
 * certs Secret and the two EndpointSlices, by name, with get and patch; the two Services by name with get;
 * nothing else in kube-system, and nothing of the same names elsewhere. What a stolen credential can still do
 * there is shown, not hidden (docs/security.md). Registered by reconciler-bounded.e2e.test.ts.
 */

import { HttpMethod } from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { DEFAULT_NAMESPACE, type KubeObject } from '../../../../core/index.ts';
import { PKI_FILES } from '../../../../core/render/pki.ts';
import {
  CERTS_SECRET,
  COMPAT_LABEL,
  COMPAT_VALUE,
  nodeLeaseProxyData,
} from '../../../../core/yurt-coordinator/index.ts';
import { waitFor } from '../../../support/wait.ts';
import type { Identity, RbacWorld } from './world.ts';

export const COMPAT_POOL = 'edge-c';
/** What the "CNI" gives the compat pool's pod (the sim kubelet reports 127.0.0.1, which no slice may hold). */
export const POD_IP = '10.244.3.5';
const KS = 'kube-system';
/** Where the functions hold only Event creation: look-alikes of the compat objects live here. */
const ELSEWHERE = 'default';
const SECRETS = `/api/v1/namespaces/${KS}/secrets`;
const SERVICES = `/api/v1/namespaces/${KS}/services`;
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${KS}/endpointslices`;
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const ROLE = { kind: 'Role' as const, name: 'pool-spirit-reconciler-yurt-coordinator', namespace: KS };
const OPERATOR_KEYS = nodeLeaseProxyData({ certPem: 'the operator node-lease-proxy cert', keyPem: 'its key' });

const dnsSlice = (name: string, namespace = KS, service = 'kube-dns') => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name,
    namespace,
    labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'rbac-test' },
  },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.0.0.53'] }],
  ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
});

function condition(obj: KubeObject | undefined, type: string) {
  const conditions = (obj?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? [];
  return conditions.find((c) => c.type === type);
}
const unb64 = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');

/**
 * What the attacks need: other objects in kube-system (a Secret, the DNS Service and a slice of it), look-alikes
 * of the compat objects in another namespace, the operator's node-lease-proxy keys, and a compat pool converged
 * by the functions with its pod on a routable address.
 */
export async function compatPool(world: RbacWorld): Promise<void> {
  await world.applyAsAdmin({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'cluster-admin-token', namespace: KS },
    data: { token: Buffer.from('not for the functions').toString('base64') },
  });
  await world.applyAsAdmin({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', namespace: KS },
    spec: { selector: { 'k8s-app': 'kube-dns' }, ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] },
  });
  await world.applyAsAdmin(dnsSlice('kube-dns-rbactest'));
  await world.applyAsAdmin({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CERTS_SECRET, namespace: ELSEWHERE },
  });
  await world.applyAsAdmin(dnsSlice('yurt-coordinator-apiserver', ELSEWHERE, 'yurt-coordinator-apiserver'));
  await world.admin.requestJson(HttpMethod.PATCH, `${SECRETS}/${CERTS_SECRET}`, {
    body: { data: OPERATOR_KEYS },
    contentType: MERGE,
    query: { fieldManager: 'node-lease-proxy-install' },
  });

  await world.addEc2Node(`${COMPAT_POOL}-node-0`, COMPAT_POOL, 'i-0a1b2c3d4e5f60003');
  await world.applyAsAdmin({
    apiVersion: 'apps.openyurt.io/v1beta2',
    kind: 'NodePool',
    metadata: { name: COMPAT_POOL, labels: { [COMPAT_LABEL]: COMPAT_VALUE } },
    spec: { type: 'Edge' },
  });
  await waitFor(
    async () => {
      await world.reconcile(COMPAT_POOL);
      const ps = await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', COMPAT_POOL);
      return condition(ps, 'Available')?.status === 'True';
    },
    60_000,
    `PoolSpirit ${COMPAT_POOL} Available`,
    50,
  );
  // The CNI's address for the pod, then the reconcile a pod change triggers.
  const pods = await world.admin.requestJson<{ items: KubeObject[] }>(
    HttpMethod.GET,
    `/api/v1/namespaces/${DEFAULT_NAMESPACE}/pods`,
    { query: { labelSelector: `poolspirit.io/pool=${COMPAT_POOL}` } },
  );
  const pod = pods.items.find((p) => !p.metadata.deletionTimestamp)!;
  await world.admin.requestJson(
    HttpMethod.PATCH,
    `/api/v1/namespaces/${DEFAULT_NAMESPACE}/pods/${pod.metadata.name}/status`,
    { body: { status: { podIP: POD_IP, podIPs: [{ ip: POD_IP }] } }, contentType: MERGE },
  );
  await waitFor(
    async () => {
      await world.reconcile(COMPAT_POOL);
      return (await sliceAddresses(world, 'yurt-coordinator-apiserver')).includes(POD_IP);
    },
    20_000,
    'the compat pool in the EndpointSlices',
    50,
  );
  await policyInForce(world, true);
}

/**
 * Waits until the admission policy refuses (or, `false`, lets through) a relabel of the functions' slice:
 * it binds and unbinds asynchronously. Probed with a dry run (admission runs, nothing is stored).
 */
async function policyInForce(world: RbacWorld, inForce: boolean): Promise<void> {
  const reconciler = await world.as('reconciler');
  await waitFor(
    async () =>
      (
        await reconciler.request(
          'PATCH',
          `${SLICES}/yurt-coordinator-apiserver?dryRun=All`,
          { metadata: { labels: { 'kubernetes.io/service-name': 'kube-dns' } } },
          MERGE,
        )
      ).status === (inForce ? 403 : 200),
    30_000,
    `the yurt-coordinator admission policy ${inForce ? 'in force' : 'unbound'}`,
    200,
  );
}

async function sliceAddresses(world: RbacWorld, name: string): Promise<string[]> {
  const slice = await world.read('discovery.k8s.io/v1', 'EndpointSlice', name, KS);
  return ((slice?.endpoints ?? []) as Array<{ addresses: string[] }>).map((e) => e.addresses[0]!);
}

/** Registers the tests; `get` gives the world and the reconciler's identity once beforeAll has run. */
export function compatAttacks(get: () => { world: RbacWorld; reconciler: Identity }): void {
  /** The request as the reconciler identity; a 403 whose message names it. */
  async function refused(method: string, path: string, body?: unknown, contentType?: string): Promise<string> {
    const res = await get().reconciler.request(method, path, body, contentType);
    expect(res.status, `${method} ${path}: ${res.status} ${res.json?.reason ?? ''}`).toBe(403);
    return res.json.message as string;
  }
  const read = (apiVersion: string, kind: string, name: string, namespace = KS) =>
    get().world.read(apiVersion, kind, name, namespace);

  it('positive control: a compat pool converges with these rights alone, every rule of the Role used, nothing refused', async () => {
    const { world } = get();
    const data = (await read('v1', 'Secret', CERTS_SECRET))!.data as Record<string, string>;
    const ca = (await read('v1', 'Secret', `ps-${COMPAT_POOL}-ca`, DEFAULT_NAMESPACE))!.data as Record<string, string>;
    expect(unb64(data['ca.crt'])).toContain(unb64(ca[PKI_FILES.caCert]).trim());
    expect(unb64(data['ca.crt'])).toContain(unb64(ca[PKI_FILES.etcdCaCert]).trim());
    // The operator's keys are kept: the functions' applies do not own them.
    expect(data['node-lease-proxy-client.crt']).toBe(OPERATOR_KEYS['node-lease-proxy-client.crt']);
    const slice = await read('discovery.k8s.io/v1', 'EndpointSlice', 'yurt-coordinator-etcd');
    expect(slice?.endpoints).toEqual([
      expect.objectContaining({ addresses: [POD_IP], nodeName: `${COMPAT_POOL}-node-0` }),
    ]);
    const ps = await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', COMPAT_POOL);
    expect(condition(ps, 'YurtCoordinatorObjectsReady')).toMatchObject({ status: 'True', reason: 'Applied' });
    // kube-apiserver's audit log: every rule of the Role used, nothing of these kinds refused (the attacks on
    // RBAC objects before this are the reconciler's only denials so far).
    const report = await world.authz.report(ROLE);
    expect(report.map((r) => [r.rule.resources, r.allowed > 0, r.unusedPermissions])).toEqual([
      [['secrets'], true, []],
      [['endpointslices'], true, []],
      [['services'], true, []],
    ]);
    const denied = (await world.authz.denials()).filter((d) =>
      ['secrets', 'services', 'endpointslices'].includes(d.resource),
    );
    expect(denied.map((d) => d.message)).toEqual([]);
  });

  it('cannot read, list or watch any other Secret in kube-system', async () => {
    expect(await refused('GET', `${SECRETS}/cluster-admin-token`)).toMatch(/cannot get resource "secrets"/);
    expect(await refused('GET', SECRETS)).toMatch(/cannot list resource "secrets"/);
    expect(await refused('GET', `${SECRETS}?watch=true&fieldSelector=metadata.name%3D${CERTS_SECRET}`)).toMatch(
      /cannot watch resource "secrets"/,
    );
  });

  it('cannot create, patch, replace or delete a Secret in kube-system, the certs Secret included (patch of it aside)', async () => {
    const before = await read('v1', 'Secret', CERTS_SECRET);
    await refused('POST', SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'planted', namespace: KS } });
    await refused('PATCH', `${SECRETS}/cluster-admin-token`, { data: { token: 'eA==' } }, MERGE);
    await refused('DELETE', `${SECRETS}/cluster-admin-token`);
    expect(await refused('PUT', `${SECRETS}/${CERTS_SECRET}`, before)).toMatch(/cannot update resource "secrets"/);
    expect(await refused('DELETE', `${SECRETS}/${CERTS_SECRET}`)).toMatch(/cannot delete resource "secrets"/);
    expect(await read('v1', 'Secret', 'planted')).toBeUndefined();
    expect((await read('v1', 'Secret', 'cluster-admin-token'))?.data).toEqual({
      token: Buffer.from('not for the functions').toString('base64'),
    });
  });

  it('cannot create, patch or delete a Service in kube-system, its own two included', async () => {
    expect(
      await refused('PATCH', `${SERVICES}/yurt-coordinator-apiserver`, { metadata: { annotations: null } }, MERGE),
    ).toMatch(/cannot patch resource "services"/);
    await refused('DELETE', `${SERVICES}/yurt-coordinator-etcd`);
    await refused('PATCH', `${SERVICES}/kube-dns`, { spec: { selector: { app: 'attacker' } } }, MERGE);
    await refused('POST', SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'planted', namespace: KS },
      spec: { ports: [{ port: 53 }] },
    });
    const svc = await read('v1', 'Service', 'yurt-coordinator-apiserver');
    expect(svc?.metadata.annotations).toMatchObject({ 'openyurt.io/topologyKeys': 'openyurt.io/nodepool' });
  });

  it("cannot create an EndpointSlice (here: for the cluster's DNS), patch another, list them, or delete its own", async () => {
    expect(await refused('POST', SLICES, dnsSlice('planted'))).toMatch(/cannot create resource "endpointslices"/);
    await refused(
      'PATCH',
      `${SLICES}/planted?fieldManager=attacker&force=true`,
      { ...dnsSlice('planted'), endpoints: [{ addresses: ['10.66.6.6'] }] },
      APPLY,
    );
    await refused('PATCH', `${SLICES}/kube-dns-rbactest`, { endpoints: [{ addresses: ['10.66.6.6'] }] }, MERGE);
    await refused('GET', SLICES);
    expect(await refused('DELETE', `${SLICES}/yurt-coordinator-apiserver`)).toMatch(
      /cannot delete resource "endpointslices"/,
    );
    expect(await read('discovery.k8s.io/v1', 'EndpointSlice', 'planted')).toBeUndefined();
    expect(await sliceAddresses(get().world, 'kube-dns-rbactest')).toEqual(['10.0.0.53']);
  });

  it('holds nothing on the same names in another namespace', async () => {
    const ns = ELSEWHERE;
    await refused('GET', `/api/v1/namespaces/${ns}/secrets/${CERTS_SECRET}`);
    await refused('PATCH', `/api/v1/namespaces/${ns}/secrets/${CERTS_SECRET}`, { data: { x: 'eA==' } }, MERGE);
    await refused(
      'PATCH',
      `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/yurt-coordinator-apiserver`,
      { endpoints: [{ addresses: ['10.66.6.6'] }] },
      MERGE,
    );
  });

  const relabel = { metadata: { labels: { 'kubernetes.io/service-name': 'kube-dns' } } };
  const rekey = { data: { 'node-lease-proxy-client.key': Buffer.from('attacker key').toString('base64') } };
  const slicePath = `${SLICES}/yurt-coordinator-apiserver`;

  it('with the admission component, cannot relabel its slice to serve kube-dns nor touch the operator keys', async () => {
    expect(await refused('PATCH', slicePath, relabel, MERGE)).toMatch(/must keep kubernetes.io\/service-name/);
    expect(await refused('PATCH', `${SECRETS}/${CERTS_SECRET}`, rekey, MERGE)).toMatch(/are the operator's/);
    const slice = await read('discovery.k8s.io/v1', 'EndpointSlice', 'yurt-coordinator-apiserver');
    expect(slice?.metadata.labels?.['kubernetes.io/service-name']).toBe('yurt-coordinator-apiserver');
  });

  it('residue without the admission component, written down in docs/security.md: RBAC names objects, not fields, so both go through', async () => {
    const { world, reconciler } = get();
    const binding = world.installed.find(
      (o) =>
        o.kind === 'ValidatingAdmissionPolicyBinding' && o.metadata.name === 'pool-spirit-yurt-coordinator-objects',
    );
    if (!binding) throw new Error('the yurt-coordinator admission component is not installed');
    await world.admin.delete({
      apiVersion: binding.apiVersion,
      kind: binding.kind,
      metadata: { name: binding.metadata.name },
    });
    try {
      await policyInForce(world, false);
      expect((await reconciler.request('PATCH', slicePath, relabel, MERGE)).status).toBe(200);
      expect((await reconciler.request('PATCH', `${SECRETS}/${CERTS_SECRET}`, rekey, MERGE)).status).toBe(200);
    } finally {
      await world.admin.requestJson(HttpMethod.PATCH, slicePath, {
        body: { metadata: { labels: { 'kubernetes.io/service-name': 'yurt-coordinator-apiserver' } } },
        contentType: MERGE,
      });
      await world.admin.requestJson(HttpMethod.PATCH, `${SECRETS}/${CERTS_SECRET}`, {
        body: { data: OPERATOR_KEYS },
        contentType: MERGE,
        query: { fieldManager: 'node-lease-proxy-install' },
      });
      await world.applyAsAdmin(binding);
      await policyInForce(world, true);
    }
  });

  it('residue, written down: it reads the whole certs Secret (the node-lease-proxy key too) and can point the slices anywhere', async () => {
    const { world, reconciler } = get();
    const secret = await reconciler.request('GET', `${SECRETS}/${CERTS_SECRET}`);
    expect(secret.status).toBe(200);
    expect(Object.keys(secret.json.data).sort()).toEqual([
      'ca.crt',
      'node-lease-proxy-client.crt',
      'node-lease-proxy-client.key',
      'yurt-coordinator-yurthub-client.crt',
      'yurt-coordinator-yurthub-client.key',
    ]);
    const redirected = await reconciler.request(
      'PATCH',
      `${SLICES}/yurt-coordinator-etcd`,
      { endpoints: [{ addresses: ['10.66.6.6'], nodeName: `${COMPAT_POOL}-node-0` }] },
      MERGE,
    );
    expect(redirected.status).toBe(200);
    // The next reconcile of any compat pool puts it back.
    await world.reconcile(COMPAT_POOL);
    expect(await sliceAddresses(world, 'yurt-coordinator-etcd')).toEqual([POD_IP]);
  });
}
