/**
 * The pool-spirit apiserver in process mode, as a YurtHub sees it. A second pool-spirit is started from the
 * real pod's plan (same Secrets, same certificates) with its agent held back, so "before bootstrap" is a
 * state the test controls rather than a race with the agent.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { silentLogger } from '../../agent/log.ts';
import { poolName, nodeName } from '../../local/fleet/seed.ts';
import { objectNames } from '../../core/render/names.ts';
import { hostSecrets, type PoolSpiritPod } from '../../local/kubelet/process/pod-plan.ts';
import { startPoolSpirit, type RunningPoolSpirit } from '../../local/kubelet/process/pool-spirit-process.ts';
import type { CertAndKey } from '../../local/kube-api/index.ts';
import { call, clusterAuthority, nodeCertificate, poolSpiritPod, startProcessFleet, strangerCertificate, waitFor, type ProcessFleet } from './world.ts';
import { permitted, runAll, yurtHubCalls, type Target } from './yurthub-writes.ts';

type Obj = Record<string, any>;
const POOL = poolName(0);
const NODE = nodeName(POOL, 0);
const ROLE_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles/poolspirit:yurthub';
const BINDING_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/poolspirit:yurthub';

/** The agent's identity (system:masters inside the pool-spirit), from the rendered -agent Secret's kubeconfig. */
async function adminIdentity(host: RawObjectApi, namespace: string): Promise<CertAndKey> {
  const secret = await host.requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/${namespace}/secrets/${objectNames(POOL).agentSecret}`);
  const kc = parse(Buffer.from(secret.data.kubeconfig, 'base64').toString('utf8'));
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return { certPem: b64(kc.users[0].user['client-certificate-data']), keyPem: b64(kc.users[0].user['client-key-data']) };
}

const writes = (t: Target, round: string) => ({
  pod: () => call(t.url, t.caPem, 'POST', '/api/v1/namespaces/default/pods', {
    client: t.client,
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${round}`, namespace: 'default' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
  }),
});

describe('process mode: the pool-spirit apiserver and YurtHub node certificates', () => {
  let world: ProcessFleet;
  let spirit: RunningPoolSpirit;
  let admin: Target;
  let node: Target;

  beforeAll(async () => {
    world = await startProcessFleet();
    const pod = (await waitFor(() => poolSpiritPod(world.fleet), 20_000, 'the pool-spirit pod')) as PoolSpiritPod;
    const host = RawObjectApi.fromKubeConfig(world.fleet.clusters[0].kubeConfig);
    spirit = await startPoolSpirit(pod, {
      secret: hostSecrets(host, pod.metadata.namespace),
      hostKubeconfigPath: world.fleet.clusters[0].kubeconfigPath,
      startAgent: false,
      agentOptions: { logger: silentLogger, intervalMs: 100, bootstrapIntervalMs: 100, backoff: { initialMs: 50, maxMs: 200 } },
    });
    admin = { url: spirit.apiServerUrl, caPem: spirit.caPem, client: await adminIdentity(host, pod.metadata.namespace) };
    node = { url: spirit.apiServerUrl, caPem: spirit.caPem, client: await nodeCertificate(clusterAuthority(world.fleet.clusterCa), NODE) };
  }, 120_000);
  afterAll(async () => {
    await spirit?.stop();
    await world?.stop();
  });

  it('refuses requests without a client certificate or with one from an unknown CA (401)', async () => {
    const stranger: Target = { ...node, client: await strangerCertificate(NODE) };
    for (const client of [undefined, stranger.client]) {
      const list = await call(node.url, node.caPem, 'GET', '/api/v1/namespaces', { client });
      expect(list.status).toBe(401);
      expect(list.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
      expect((await writes({ ...node, client: client! }, 'anon').pod()).status).toBe(401);
    }
  });

  it('lets a cluster-CA node certificate write nothing before the bootstrap, and a Pod, Node, Lease, Endpoints and EndpointSlice after', async () => {
    const before = { pod: (await writes(node, 'before').pod()).status, ...(await runAll(yurtHubCalls(NODE, POOL).filter((c) => c.name.startsWith('create')), node, 'before')) };
    expect(before).toEqual({ pod: 403, 'create Node': 403, 'create Lease kube-system/yurthub': 403, 'create Endpoints': 403, 'create EndpointSlice': 403 });

    await spirit.startAgent();
    await waitFor(async () => (await call(admin.url, admin.caPem, 'GET', BINDING_PATH, { client: admin.client })).status === 200, 15_000, 'the agent applied the bootstrap');
    // What YurtHub reads and updates exists in a live pool: its Node and its NodePool.
    expect((await call(admin.url, admin.caPem, 'POST', '/api/v1/nodes', { client: admin.client, body: { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } } })).status).toBe(201);
    await waitFor(async () => (await call(admin.url, admin.caPem, 'POST', '/apis/apps.openyurt.io/v1beta1/nodepools', {
      client: admin.client, body: { apiVersion: 'apps.openyurt.io/v1beta1', kind: 'NodePool', metadata: { name: POOL }, spec: { type: 'Edge' } },
    })).status === 201, 10_000, 'NodePool created');

    const pod = await writes(node, 'after').pod();
    expect(pod.status).toBe(201);
    const after = await runAll(yurtHubCalls(NODE, POOL), node, 'after');
    expect(Object.entries(after).filter(([, s]) => !permitted(s))).toEqual([]);
    expect(after['create Node']).toBe(201);
    expect(after['create Endpoints']).toBe(201);
    expect(after['create EndpointSlice']).toBe(201);
    await spirit.agent()!.stop(); // from here the test edits the bootstrap RBAC; the agent would restore it
  }, 30_000);

  /**
   * Whether `admin` (aggregated from edit) already grants Lease writes: kube's edit role gained
   * coordination.k8s.io leases in recent releases (the local API seeds kube 1.32's policy), older ones lack
   * it. Where admin has them, the Lease rule of poolspirit:yurthub is redundant; the expectations below
   * follow the policy the apiserver actually serves rather than assuming either.
   */
  async function adminGrantsLeaseWrites(): Promise<boolean> {
    const role = await call(admin.url, admin.caPem, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin', { client: admin.client });
    expect(role.status).toBe(200);
    return (role.body.rules as Obj[]).some((r) =>
      r.apiGroups?.includes('coordination.k8s.io') && r.resources?.includes('leases') && ['create', 'update'].every((v) => r.verbs.includes(v) || r.verbs.includes('*')));
  }

  it('poolspirit:yurthub is the least extra role: each rule beyond admin is needed by some YurtHub request', async () => {
    const role = await call(admin.url, admin.caPem, 'GET', ROLE_PATH, { client: admin.client });
    const rules: Obj[] = role.body.rules;
    const denied: Record<string, string[]> = {};
    for (const [i, rule] of rules.entries()) {
      const without = { ...role.body, metadata: { name: role.body.metadata.name }, rules: rules.filter((_, j) => j !== i) };
      expect((await call(admin.url, admin.caPem, 'PUT', ROLE_PATH, { client: admin.client, body: without })).status).toBe(200);
      const result = await runAll(yurtHubCalls(NODE, POOL), node, `without-${i}`);
      denied[`${rule.apiGroups[0] || 'core'}/${rule.resources.join(',')}`] = Object.entries(result).filter(([, s]) => s === 403).map(([n]) => n);
      const back = { ...role.body, metadata: { name: role.body.metadata.name } };
      expect((await call(admin.url, admin.caPem, 'PUT', ROLE_PATH, { client: admin.client, body: back })).status).toBe(200);
    }
    const leaseCalls = ['create Lease kube-system/yurthub', 'update Lease kube-system/yurthub'];
    // Each rule guards exactly the requests it is there for; none but (where admin has them) Leases could go.
    expect(denied).toEqual({
      'coordination.k8s.io/leases': (await adminGrantsLeaseWrites()) ? [] : leaseCalls,
      'core/nodes': ['create Node', 'update Node'],
      'apps.openyurt.io/nodepools': ['get NodePool', 'list NodePools'],
      'core/endpoints': ['create Endpoints'],
      'discovery.k8s.io/endpointslices': ['create EndpointSlice'],
    });
  }, 30_000);

  it('admin alone (system:nodes → admin) does not let a YurtHub write Nodes, read NodePools or write Endpoints and EndpointSlices', async () => {
    expect((await call(admin.url, admin.caPem, 'DELETE', BINDING_PATH, { client: admin.client })).status).toBe(200);
    const result = await runAll(yurtHubCalls(NODE, POOL), node, 'admin-only');
    const leases = (await adminGrantsLeaseWrites()) ? 'permitted' : 'denied';
    const verdict = (status: number) => (permitted(status) ? 'permitted' : status === 403 ? 'denied' : `HTTP ${status}`);
    expect(Object.fromEntries(Object.entries(result).map(([name, status]) => [name, verdict(status)]))).toEqual({
      'create Node': 'denied',
      'update Node': 'denied',
      'create Lease kube-system/yurthub': leases,
      'update Lease kube-system/yurthub': leases,
      'get NodePool': 'denied',
      'list NodePools': 'denied',
      'create Endpoints': 'denied',
      'create EndpointSlice': 'denied',
    });
    // admin does cover the namespaced workload writes the feature request wanted it for.
    expect((await writes(node, 'admin-only').pod()).status).toBe(201);
  });
});
