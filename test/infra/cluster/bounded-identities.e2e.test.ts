/**
 * The cluster-side RBAC and admission policy of infra/, on the real kube-apiserver 1.36 (real RBAC with its
 * escalation checks, real ValidatingAdmissionPolicy with CEL): the attacks a stolen reconciler credential
 * used to allow are refused, and with the agent-status admission policy installed each pool's agent may write
 * only its own PoolSpirit's status. kubectl impersonates each identity (the admin of this apiserver may).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import { type RealApiserver, startRealApiserver } from '../../support/real-apiserver.ts';
import { waitFor } from '../../support/wait.ts';
import { REPO_ROOT } from '../manifests.ts';

const NS = DEFAULT_NAMESPACE;
const RECONCILER = ['--as=x', '--as-group=pool-spirit:reconciler'];
/** User, then groups, as the apiserver would authenticate the identity. */
const serviceAccount = (name: string) => [
  `system:serviceaccount:${NS}:${name}`,
  'system:serviceaccounts',
  `system:serviceaccounts:${NS}`,
  'system:authenticated',
];
const FUNCTIONS = ['x', 'pool-spirit:reconciler', 'system:authenticated'];

describe('infra/ RBAC and admission on the real kube-apiserver', () => {
  let real: RealApiserver;
  /** A merge patch of the status alone, with no GET before it: what the agent sends. */
  const patchStatus = (name: string, as: string[]) =>
    real.raw('PATCH', `/apis/poolspirit.io/v1alpha1/poolspirits/${name}/status`, {
      body: JSON.stringify({ status: { endpoint: 'https://10.0.0.1:443' } }),
      contentType: 'application/merge-patch+json',
      as,
    });

  beforeAll(async () => {
    real = await startRealApiserver();
    await real.kubectl(
      'apply',
      '-f',
      `${REPO_ROOT}infra/crds/poolspirit.yaml`,
      '-f',
      `${REPO_ROOT}infra/crds/nodepool.yaml`,
    );
    await real.kubectl(
      'wait',
      '--for=condition=Established',
      'crd/poolspirits.poolspirit.io',
      'crd/nodepools.apps.openyurt.io',
      '--timeout=60s',
    );
    await real.kubectl('create', 'namespace', NS);
    await real.kubectl(
      'apply',
      '-f',
      `${REPO_ROOT}infra/cluster/reconciler/rbac.yaml`,
      '-f',
      `${REPO_ROOT}infra/cluster/agent/rbac.yaml`,
    );
    for (const name of ['edge-a', 'edge-b']) {
      const created = await real.try(
        ['create', '-f', '-'],
        `apiVersion: poolspirit.io/v1alpha1\nkind: PoolSpirit\nmetadata:\n  name: ${name}\nspec:\n  nodePool: ${name}\n`,
      );
      expect(created.code, created.stderr).toBe(0);
    }
  }, 120_000);

  afterAll(async () => {
    await real?.stop();
  });

  it('refuses the reconciler weakening cluster-admin, exactly as the attack was run', async () => {
    const weak =
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cluster-admin\nrules:\n  - apiGroups: [apps.openyurt.io]\n    resources: [nodepools]\n    verbs: [get]\n';
    const out = await real.try(
      [
        'apply',
        '--server-side',
        '--force-conflicts',
        '--field-manager=pool-spirit-reconciler',
        '-f',
        '-',
        ...RECONCILER,
      ],
      weak,
    );
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/forbidden/i);
    // cluster-admin is untouched.
    expect(await real.kubectl('get', 'clusterrole', 'cluster-admin', '-o', 'jsonpath={.rules[0].verbs}')).toBe('["*"]');
  });

  it("refuses the reconciler binding its own ClusterRole, or a pool's CA Secret, to another user", async () => {
    const bind = await real.try([
      'create',
      'clusterrolebinding',
      'steal',
      '--clusterrole=pool-spirit-reconciler',
      '--user=mallory',
      ...RECONCILER,
    ]);
    expect(bind.code).not.toBe(0);
    expect(bind.stderr).toMatch(/forbidden/i);
    const role = await real.try([
      'create',
      'role',
      'ca-reader',
      '-n',
      NS,
      '--verb=get',
      '--resource=secrets',
      '--resource-name=ps-edge-a-ca',
      ...RECONCILER,
    ]);
    expect(role.code).not.toBe(0);
    expect(role.stderr).toMatch(/forbidden/i);
    const binding = await real.try([
      'create',
      'rolebinding',
      'ca-reader',
      '-n',
      NS,
      '--clusterrole=view',
      '--user=mallory',
      ...RECONCILER,
    ]);
    expect(binding.code).not.toBe(0);
    expect(binding.stderr).toMatch(/forbidden/i);
    expect(
      (await real.try(['auth', 'can-i', 'get', 'secret/ps-edge-a-ca', '-n', NS, '--as=mallory'])).stdout.trim(),
    ).toBe('no');
  });

  it('without the admission policy any ServiceAccount of the namespace may write any PoolSpirit status (the residue of a group subject)', async () => {
    const other = await patchStatus('edge-b', serviceAccount('ps-edge-a'));
    expect(other.status, other.body).toBe(200);
  });

  it('with the agent-status admission policy, ps-<pool> writes only PoolSpirit <pool>; the forwarder none', async () => {
    const policy = await real.try([
      'apply',
      '-f',
      `${REPO_ROOT}infra/cluster/components/agent-status-admission/policy.yaml`,
    ]);
    expect(policy.code, policy.stderr).toBe(0);
    // The apiserver compiles and starts enforcing a new policy asynchronously: wait until it refuses.
    const refused = await waitFor(
      async () => {
        const out = await patchStatus('edge-b', serviceAccount('ps-edge-a'));
        return out.status !== 200 ? out : undefined;
      },
      30_000,
      'the admission policy to be enforced',
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('may write the status of its own PoolSpirit only, not edge-b');
    const own = await patchStatus('edge-a', serviceAccount('ps-edge-a'));
    expect(own.status, own.body).toBe(200);
    const forwarder = await patchStatus('edge-a', serviceAccount('pool-spirit-forwarder'));
    expect(forwarder.status).toBe(403);
    expect(forwarder.body).toContain('may write the status of its own PoolSpirit only');
    // The functions' identity is not a ServiceAccount: the policy does not match it, RBAC decides.
    const reconciler = await patchStatus('edge-b', FUNCTIONS);
    expect(reconciler.status, reconciler.body).toBe(200);
  }, 60_000);
});
