/**
 * The pool-spirit apiserver in process mode, as a YurtHub sees it. A second pool-spirit is started from the
 * real pod's plan (same Secrets, same certificates) with its agent held back, so "before bootstrap" is a
 * state the test controls rather than a race with the agent.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { RawObjectApi } from '../../../../../adapters/kubernetes/raw-object-api.ts';
import { silentLogger } from '../../../../../agent/log.ts';
import { objectNames } from '../../../../../core/render/names.ts';
import { nodeName, poolName } from '../../../../../dev/local/fleet/seed.ts';
import { hostSecrets, type PoolSpiritPod } from '../../../../../dev/local/kubelet/process/pod-plan.ts';
import {
  type RunningPoolSpirit,
  startPoolSpirit,
} from '../../../../../dev/local/kubelet/process/pool-spirit-process.ts';
import type { CertAndKey } from '../../../../../dev/local/pki.ts';
import {
  call,
  clusterAuthority,
  nodeCertificate,
  type ProcessFleet,
  poolSpiritPod,
  startProcessFleet,
  strangerCertificate,
  waitFor,
} from './world.ts';
import { permitted, runAll, type Target, yurtHubCalls } from './yurthub-writes.ts';

type Obj = Record<string, any>;
const POOL = poolName(0);
const NODE = nodeName(POOL, 0);
const ROLE_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles/poolspirit:yurthub';
const BINDING_PATH = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/poolspirit:yurthub';

/** The agent's identity (system:masters inside the pool-spirit), from the rendered -agent Secret's kubeconfig. */
async function adminIdentity(host: RawObjectApi, namespace: string): Promise<CertAndKey> {
  const secret = await host.requestJson<Obj>(
    HttpMethod.GET,
    `/api/v1/namespaces/${namespace}/secrets/${objectNames(POOL).agentSecret}`,
  );
  const kc = parse(Buffer.from(secret.data.kubeconfig, 'base64').toString('utf8'));
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    certPem: b64(kc.users[0].user['client-certificate-data']),
    keyPem: b64(kc.users[0].user['client-key-data']),
  };
}

/** What a stolen node certificate would try beyond YurtHub's job; every one must be refused (403). */
const outOfRole = (t: Target) => ({
  'read Secrets': () => call(t.url, t.caPem, 'GET', '/api/v1/namespaces/kube-system/secrets', { client: t.client }),
  'create Pod': () =>
    call(t.url, t.caPem, 'POST', '/api/v1/namespaces/default/pods', {
      client: t.client,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
      },
    }),
  'create Namespace': () =>
    call(t.url, t.caPem, 'POST', '/api/v1/namespaces', {
      client: t.client,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stolen' } },
    }),
  'write NodePool': () =>
    call(t.url, t.caPem, 'POST', '/apis/apps.openyurt.io/v1beta1/nodepools', {
      client: t.client,
      body: {
        apiVersion: 'apps.openyurt.io/v1beta1',
        kind: 'NodePool',
        metadata: { name: 'stolen' },
        spec: { type: 'Edge' },
      },
    }),
  'bind cluster-admin': () =>
    call(t.url, t.caPem, 'POST', BINDING_PATH.replace('/poolspirit:yurthub', ''), {
      client: t.client,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'stolen' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'User', name: 'x' }],
      },
    }),
});

async function statuses(calls: Record<string, () => Promise<{ status: number }>>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, run] of Object.entries(calls)) out[name] = (await run()).status;
  return out;
}

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
      agentOptions: {
        logger: silentLogger,
        intervalMs: 100,
        bootstrapIntervalMs: 100,
        backoff: { initialMs: 50, maxMs: 200 },
      },
    });
    admin = {
      url: spirit.apiServerUrl,
      caPem: spirit.caPem,
      client: await adminIdentity(host, pod.metadata.namespace),
    };
    node = {
      url: spirit.apiServerUrl,
      caPem: spirit.caPem,
      client: await nodeCertificate(clusterAuthority(world.fleet.clusterCa), NODE),
    };
  }, 120_000);
  afterAll(async () => {
    await spirit?.stop();
    await world?.stop();
  });

  it('answers health anonymously, refuses anonymous API requests (403) and a certificate from an unknown CA (401)', async () => {
    expect((await call(node.url, node.caPem, 'GET', '/readyz')).status).toBe(200);
    const anonymous = await call(node.url, node.caPem, 'GET', '/api/v1/namespaces');
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.message).toContain('system:anonymous');
    const stranger = await call(node.url, node.caPem, 'GET', '/api/v1/namespaces', {
      client: await strangerCertificate(NODE),
    });
    expect(stranger).toMatchObject({ status: 401, body: { kind: 'Status', reason: 'Unauthorized' } });
  });

  it('lets a cluster-CA node certificate do nothing before the bootstrap, and every YurtHub request after', async () => {
    const calls = yurtHubCalls(NODE, POOL);
    const before = await runAll(calls, node, 'before');
    expect(Object.entries(before).filter(([, s]) => s !== 403)).toEqual([]);

    await spirit.startAgent();
    await waitFor(
      async () => (await call(admin.url, admin.caPem, 'GET', BINDING_PATH, { client: admin.client })).status === 200,
      30_000,
      'the agent applied the bootstrap',
    );
    // What YurtHub reads and updates exists in a live pool: its Node and its NodePool.
    expect(
      (
        await call(admin.url, admin.caPem, 'POST', '/api/v1/nodes', {
          client: admin.client,
          body: { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } },
        })
      ).status,
    ).toBe(201);
    await waitFor(
      async () =>
        (
          await call(admin.url, admin.caPem, 'POST', '/apis/apps.openyurt.io/v1beta1/nodepools', {
            client: admin.client,
            body: {
              apiVersion: 'apps.openyurt.io/v1beta1',
              kind: 'NodePool',
              metadata: { name: POOL },
              spec: { type: 'Edge' },
            },
          })
        ).status === 201,
      20_000,
      'NodePool created',
    );

    const after = await runAll(calls, node, 'after');
    expect(Object.entries(after).filter(([, s]) => !permitted(s))).toEqual([]);
    expect(after['create Lease kube-system/yurthub']).toBe(201);
    expect(await statuses(outOfRole(node))).toEqual({
      'read Secrets': 403,
      'create Pod': 403,
      'create Namespace': 403,
      'write NodePool': 403,
      'bind cluster-admin': 403,
    });
    await spirit.agent()!.stop(); // from here the test edits the bootstrap RBAC; the agent would restore it
  }, 60_000);

  it('poolspirit:yurthub is least privilege: each rule is needed by some YurtHub request, and nothing else grants it', async () => {
    const role = await call(admin.url, admin.caPem, 'GET', ROLE_PATH, { client: admin.client });
    const rules: Obj[] = role.body.rules;
    const denied: Record<string, string[]> = {};
    let round = 0;
    const deniedNow = async (label: string) =>
      Object.entries(await runAll(yurtHubCalls(NODE, POOL), node, `${label}-${++round}`))
        .filter(([, s]) => s === 403)
        .map(([n]) => n);
    // The RBAC authorizer sees a role change through its informer, a moment later on a loaded machine, and
    // then whole: a round is counted only once the change shows, and the next rule waits for the role back.
    const settled = { timeout: 20_000, interval: 250 };
    for (const [i, rule] of rules.entries()) {
      const without = {
        ...role.body,
        metadata: { name: role.body.metadata.name },
        rules: rules.filter((_, j) => j !== i),
      };
      expect(
        (await call(admin.url, admin.caPem, 'PUT', ROLE_PATH, { client: admin.client, body: without })).status,
      ).toBe(200);
      // A rule that guards nothing never shows its removal: the wait fails, as it should.
      await vi.waitFor(async () => expect((await deniedNow(`seen-without-${i}`)).length).toBeGreaterThan(0), settled);
      denied[`${rule.apiGroups[0] || 'core'}/${rule.resources.join(',')}`] = await deniedNow(`without-${i}`);
      const back = { ...role.body, metadata: { name: role.body.metadata.name } };
      expect((await call(admin.url, admin.caPem, 'PUT', ROLE_PATH, { client: admin.client, body: back })).status).toBe(
        200,
      );
      await vi.waitFor(async () => expect(await deniedNow(`back-${i}`)).toEqual([]), settled);
    }
    // Each rule guards exactly the requests it is there for: RBAC alone decides (no Node authorizer, no admin).
    expect(denied).toEqual({
      'coordination.k8s.io/leases': [
        'create Lease kube-system/yurthub',
        'update Lease kube-system/yurthub',
        'renew Lease kube-node-lease/<node>',
      ],
      'core/nodes': ['create Node', 'update Node'],
      'apps.openyurt.io/nodepools': ['get NodePool', 'list NodePools'],
      'core/endpoints': ['create Endpoints'],
      'discovery.k8s.io/endpointslices': ['create EndpointSlice'],
    });
    // Negative control: without the binding, the node certificate can do none of it.
    expect((await call(admin.url, admin.caPem, 'DELETE', BINDING_PATH, { client: admin.client })).status).toBe(200);
    // The RBAC authorizer sees the deletion through its informer, a moment later on a loaded machine: wait for it.
    await vi.waitFor(
      async () => {
        const unbound = await runAll(yurtHubCalls(NODE, POOL), node, 'unbound');
        expect(Object.entries(unbound).filter(([, s]) => s !== 403)).toEqual([]);
      },
      { timeout: 20_000, interval: 250 },
    );
  }, 60_000);
});
