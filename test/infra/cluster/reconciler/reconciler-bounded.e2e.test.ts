/**
 * The reconciler's identity is bounded, not merely minimal: acting as group `pool-spirit:reconciler` (the
 * functions' client certificate, O=pool-spirit:reconciler) against the real kube-apiserver 1.36 of the local
 * real host control plane, every way it used to have of widening its own or someone else's power is refused
 * with a 403 — weakening
 * cluster-admin, binding its own ClusterRole to another user, handing a pool's CA key Secret to another
 * user, binding anything anywhere, deleting a role. Kubernetes' escalation check would have allowed each of
 * these while the identity held create/patch on RBAC objects.
 *
 * Positive control: a pool still converges to Available, and its agent's identity (ServiceAccount
 * `ps-<pool>` of pool-spirit-system) can do the agent's two calls — through agent/adapters/host.ts itself —
 * with the static RBAC of infra/cluster/agent/rbac.yaml, while other identities cannot. The residue of
 * binding a namespace group is shown, not hidden.
 *
 * The world is installed with the opt-in yurt-coordinator compat component and its admission component: the
 * functions' kube-system rights for compat pools are attacked too
 * (compat-attacks.ts). With the Role unbounded (no resourceNames; create, update, delete), 7 of the file's 48
 * tests fail — run by hand as the negative control of those attacks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostCluster } from '../../../../agent/adapters/host.ts';
import { DEFAULT_NAMESPACE, type KubeObject } from '../../../../core/index.ts';
import { objectNames } from '../../../../core/render/names.ts';
import { COMPAT_COMPONENT_PATH } from '../../../../core/yurt-coordinator/index.ts';
import { waitFor } from '../../../support/wait.ts';
import { compatAttacks, compatPool } from './compat-attacks.ts';
import { type Identity, type RbacWorld, startRbacWorld } from './world.ts';

const NS = DEFAULT_NAMESPACE;
const POOL = 'edge-a';
const NAMES = objectNames(POOL);
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const ROLE_API = 'rbac.authorization.k8s.io/v1';
const sa = (namespace: string, name: string) => ({
  user: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});

describe('on the real control plane', () => {
  let world: RbacWorld;
  let reconciler: Identity;

  function condition(obj: KubeObject | undefined, type: string): string | undefined {
    const conditions =
      (obj?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
    return conditions.find((c) => c.type === type)?.status;
  }

  beforeAll(async () => {
    // With the yurt-coordinator compat component and its policy, as an operator using compat pools installs
    // them: its kube-system rights are attacked below.
    world = await startRbacWorld({ components: [COMPAT_COMPONENT_PATH, `${COMPAT_COMPONENT_PATH}-admission`] });
    reconciler = await world.as('reconciler');
    await world.addEc2Node('edge-a-node-0', POOL, 'i-0a1b2c3d4e5f60001');
    await world.applyAsAdmin({
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: POOL },
      spec: { type: 'Edge' },
    });
    await waitFor(
      async () => {
        await world.reconcile(POOL);
        return condition(await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL), 'Available') === 'True';
      },
      60_000,
      `PoolSpirit ${POOL} Available`,
      50,
    );
    await compatPool(world);
  }, 240_000);
  afterAll(async () => {
    await world?.stop();
  });

  /** The request as the reconciler identity; expects a 403 whose message names that identity. */
  async function refused(method: string, path: string, body?: unknown, contentType?: string): Promise<string> {
    const res = await reconciler.request(method, path, body, contentType);
    expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
    expect(res.json?.reason).toBe('Forbidden');
    return res.json.message as string;
  }

  describe('acting as group pool-spirit:reconciler, every RBAC write is refused (403)', () => {
    it('cannot weaken cluster-admin by server-side applying it with one `nodepools get` rule', async () => {
      const before = await world.read(ROLE_API, 'ClusterRole', 'cluster-admin');
      expect(before?.rules).toBeDefined();
      const message = await refused(
        'PATCH',
        `${RBAC}/clusterroles/cluster-admin?fieldManager=attacker&force=true`,
        {
          apiVersion: ROLE_API,
          kind: 'ClusterRole',
          metadata: { name: 'cluster-admin' },
          rules: [{ apiGroups: ['apps.openyurt.io'], resources: ['nodepools'], verbs: ['get'] }],
        },
        APPLY,
      );
      expect(message).toMatch(/cannot patch resource "clusterroles"/);
      // Nor as an update or a plain create of a look-alike.
      await refused('PUT', `${RBAC}/clusterroles/cluster-admin`, {
        ...before,
        rules: [{ apiGroups: ['apps.openyurt.io'], resources: ['nodepools'], verbs: ['get'] }],
      });
      await refused('POST', `${RBAC}/clusterroles`, {
        apiVersion: ROLE_API,
        kind: 'ClusterRole',
        metadata: { name: 'poolspirit:agent:evil' },
        rules: [],
      });
      expect((await world.read(ROLE_API, 'ClusterRole', 'cluster-admin'))?.rules).toEqual(before!.rules);
    });

    it('cannot bind its own ClusterRole to another user (create, apply or patch of a ClusterRoleBinding)', async () => {
      const binding = {
        apiVersion: ROLE_API,
        kind: 'ClusterRoleBinding',
        metadata: { name: 'mallory-is-reconciler' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pool-spirit-reconciler' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
      };
      expect(await refused('POST', `${RBAC}/clusterrolebindings`, binding)).toMatch(
        /cannot create resource "clusterrolebindings"/,
      );
      await refused(
        'PATCH',
        `${RBAC}/clusterrolebindings/mallory-is-reconciler?fieldManager=attacker&force=true`,
        binding,
        APPLY,
      );
      // Adding a subject to the existing binding of its own group.
      expect(
        await refused(
          'PATCH',
          `${RBAC}/clusterrolebindings/pool-spirit-reconciler`,
          {
            subjects: [
              { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'pool-spirit:reconciler' },
              { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' },
            ],
          },
          MERGE,
        ),
      ).toMatch(/cannot patch resource "clusterrolebindings"/);
      expect(await world.read(ROLE_API, 'ClusterRoleBinding', 'mallory-is-reconciler')).toBeUndefined();
      expect((await world.read(ROLE_API, 'ClusterRoleBinding', 'pool-spirit-reconciler'))?.subjects).toEqual([
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'pool-spirit:reconciler' },
      ]);
    });

    it("cannot create a Role + RoleBinding letting another user read a pool's CA key Secret", async () => {
      expect(await world.read('v1', 'Secret', NAMES.caSecret, NS)).toBeDefined();
      const role = {
        apiVersion: ROLE_API,
        kind: 'Role',
        metadata: { name: 'read-ca', namespace: NS },
        rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [NAMES.caSecret], verbs: ['get'] }],
      };
      expect(await refused('POST', `${RBAC}/namespaces/${NS}/roles`, role)).toMatch(/cannot create resource "roles"/);
      await refused('PATCH', `${RBAC}/namespaces/${NS}/roles/read-ca?fieldManager=attacker&force=true`, role, APPLY);
      expect(
        await refused('POST', `${RBAC}/namespaces/${NS}/rolebindings`, {
          apiVersion: ROLE_API,
          kind: 'RoleBinding',
          metadata: { name: 'read-ca', namespace: NS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-ca' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
        }),
      ).toMatch(/cannot create resource "rolebindings"/);
      const mallory = await world.as({ user: 'mallory', groups: [] });
      expect((await mallory.request('GET', `/api/v1/namespaces/${NS}/secrets/${NAMES.caSecret}`)).status).toBe(403);
    });

    it.each([NS, 'kube-system'])(
      'cannot create any RoleBinding in %s (here: ClusterRole admin to another user)',
      async (namespace) => {
        const message = await refused('POST', `${RBAC}/namespaces/${namespace}/rolebindings`, {
          apiVersion: ROLE_API,
          kind: 'RoleBinding',
          metadata: { name: 'mallory-admin', namespace },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
        });
        expect(message).toMatch(/cannot create resource "rolebindings"/);
        expect(await world.read(ROLE_API, 'RoleBinding', 'mallory-admin', namespace)).toBeUndefined();
      },
    );

    it.each(['pool-spirit-agent', 'pool-spirit-reconciler', 'cluster-admin'])(
      'cannot delete ClusterRole %s',
      async (name) => {
        expect(await refused('DELETE', `${RBAC}/clusterroles/${name}`)).toMatch(
          /cannot delete resource "clusterroles"/,
        );
        expect(await world.read(ROLE_API, 'ClusterRole', name)).toBeDefined();
      },
    );

    it('cannot even read RBAC objects (the audit no longer lists them), nor use bind or escalate', async () => {
      await refused('GET', `${RBAC}/clusterroles`);
      await refused('GET', `${RBAC}/namespaces/${NS}/roles`);
      await refused('GET', `${RBAC}/clusterrolebindings/pool-spirit-agent`);
      // An apply with a full object of a role it holds every rule of is refused too: no escalation check runs.
      const own = await world.read(ROLE_API, 'ClusterRole', 'pool-spirit-reconciler');
      await refused(
        'PATCH',
        `${RBAC}/clusterroles/pool-spirit-reconciler-copy?fieldManager=attacker`,
        {
          apiVersion: ROLE_API,
          kind: 'ClusterRole',
          metadata: { name: 'pool-spirit-reconciler-copy' },
          rules: own!.rules,
        },
        APPLY,
      );
    });
  });

  describe('positive control: the pool works with the static agent RBAC', () => {
    it('the pool converged to Available with no RBAC object rendered for it', async () => {
      expect(condition(await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL), 'Available')).toBe('True');
      expect(await world.read('v1', 'ServiceAccount', NAMES.base, NS)).toBeDefined();
      expect(await world.read(ROLE_API, 'Role', `${NAMES.base}-agent`, NS)).toBeUndefined();
      expect(await world.read(ROLE_API, 'ClusterRole', `poolspirit:agent:${POOL}`)).toBeUndefined();
      // The reconciler was refused nothing on the way (the attacks above are its only denials).
      const spurious = (await world.authz.denials()).filter((d) => d.group !== 'rbac.authorization.k8s.io');
      expect(spurious.map((d) => d.message)).toEqual([]);
    });

    it("the agent's identity (ServiceAccount ps-<pool>) reads its bootstrap ConfigMap and patches its status, through the agent's own client", async () => {
      const agent = await world.as(sa(NS, NAMES.base));
      const host = new HostCluster(agent.kubeConfig);
      const bootstrap = await host.readConfigMap(NS, NAMES.bootstrapConfigMap);
      expect(bootstrap?.data?.hash).toMatch(/^[0-9a-f]{64}$/);
      const renewTime = new Date().toISOString();
      await host.patchStatus(POOL, { leader: { holder: 'edge-a-node-0', renewTime, transitions: 1 } });
      const status = (await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL))?.status as {
        leader?: { renewTime?: string; transitions?: number };
      };
      expect(status.leader).toMatchObject({ transitions: 1 });
    });

    it("the agent's identity can do nothing else: no Secrets, no spec, no list of ConfigMaps, no RBAC", async () => {
      const agent = await world.as(sa(NS, NAMES.base));
      const denied = [
        await agent.request('GET', `/api/v1/namespaces/${NS}/secrets/${NAMES.caSecret}`),
        await agent.request('GET', `/api/v1/namespaces/${NS}/configmaps`),
        await agent.request('GET', `/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt`),
        await agent.request(
          'PATCH',
          `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}`,
          { spec: { paused: true } },
          MERGE,
        ),
        await agent.request('GET', `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}/status`),
        await agent.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, {
          apiVersion: ROLE_API,
          kind: 'RoleBinding',
          metadata: { name: 'x', namespace: NS },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pool-spirit-agent' },
          subjects: [{ kind: 'User', name: 'mallory' }],
        }),
      ];
      expect(denied.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
    });

    it.each([
      ['a user with no groups', { user: 'mallory', groups: [] as string[] }],
      ['the same ServiceAccount name in another namespace', sa('default', NAMES.base)],
    ])("%s cannot do the agent's calls", async (_, who) => {
      const other = await world.as(who);
      expect(
        (await other.request('GET', `/api/v1/namespaces/${NS}/configmaps/${NAMES.bootstrapConfigMap}`)).status,
      ).toBe(403);
      expect(
        (
          await other.request(
            'PATCH',
            `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}/status`,
            { status: { leader: { holder: 'x', renewTime: new Date().toISOString(), transitions: 9 } } },
            MERGE,
          )
        ).status,
      ).toBe(403);
    });

    it("the functions' identity no longer holds the agent's extra status verbs (update, get), held before only to grant them", async () => {
      const spirit = await world.read('poolspirit.io/v1alpha1', 'PoolSpirit', POOL);
      expect(
        (await reconciler.request('PUT', `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}/status`, spirit)).status,
      ).toBe(403);
      expect((await reconciler.request('GET', `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}/status`)).status).toBe(
        403,
      );
    });

    it("residue, written down: any ServiceAccount of the namespace (another pool's agent, the forwarder) shares the grant", async () => {
      // Closed for status writes only by the opt-in ValidatingAdmissionPolicy (components/agent-status-admission),
      // which this world does not install; ConfigMap reads stay open to them (bootstrap manifests, no secrets).
      for (const who of [sa(NS, 'ps-edge-b'), sa(NS, 'pool-spirit-forwarder')]) {
        const other = await world.as(who);
        expect(
          (await other.request('GET', `/api/v1/namespaces/${NS}/configmaps/${NAMES.bootstrapConfigMap}`)).status,
        ).toBe(200);
        expect(
          (
            await other.request(
              'PATCH',
              `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}/status`,
              { status: {} },
              MERGE,
            )
          ).status,
        ).toBe(200);
        expect((await other.request('GET', `/api/v1/namespaces/${NS}/secrets/${NAMES.caSecret}`)).status).toBe(403);
      }
    });
  });

  describe('acting as group pool-spirit:reconciler in kube-system: the yurt-coordinator objects only, get and patch only', () => {
    compatAttacks(() => ({ world, reconciler }));
  });
});
