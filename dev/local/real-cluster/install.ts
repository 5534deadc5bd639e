/**
 * The product's cluster side installed into a real host cluster as an operator would (`kubectl apply -k
 * infra/cluster`, built by the pinned kubectl's kustomize), minus the forwarder's Deployment (the local stack
 * runs the forwarder in process), and a kubeconfig per product identity, each a client certificate of the
 * cluster CA naming the user and groups the shipped RBAC binds:
 *
 * | identity | user | groups | bound by |
 * |---|---|---|---|
 * | functions | `pool-spirit-reconciler` | `pool-spirit:reconciler` | infra/cluster/reconciler/rbac.yaml |
 * | forwarder | `system:serviceaccount:pool-spirit-system:pool-spirit-forwarder` | the ServiceAccount groups | infra/cluster/forwarder/rbac.yaml |
 * | agents | `system:serviceaccount:pool-spirit-system:pool-spirit-agent` | `system:serviceaccounts:pool-spirit-system` | infra/cluster/agent/rbac.yaml |
 *
 * So every identity is judged by the real apiserver's RBAC with exactly the rules shipped.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { RECONCILER_GROUP } from '../../../core/security/index.ts';
import { KUBECTL } from '../kube-bins/index.ts';
import type { ClientIdentity, RealHostCluster } from './control-plane.ts';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const INSTALL_MANAGER = 'pool-spirit-local-install';
const NAMESPACE = 'pool-spirit-system';

export const PRODUCT_IDENTITIES = {
  reconciler: { user: 'pool-spirit-reconciler', groups: [RECONCILER_GROUP] },
  forwarder: {
    user: `system:serviceaccount:${NAMESPACE}:pool-spirit-forwarder`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`],
  },
  agent: {
    user: `system:serviceaccount:${NAMESPACE}:pool-spirit-agent`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${NAMESPACE}`],
  },
} as const satisfies Record<string, ClientIdentity>;

export type ProductIdentity = keyof typeof PRODUCT_IDENTITIES;

/**
 * `kubectl kustomize infra/cluster`, parsed; with components (paths from the repository root, e.g.
 * `infra/cluster/components/yurt-coordinator-compat`), an operator's overlay of infra/cluster using them.
 */
export async function productManifests(components: string[] = []): Promise<KubernetesObject[]> {
  const build = async (dir: string, cwd?: string) =>
    (await run(KUBECTL, ['kustomize', dir], { cwd, maxBuffer: 32 << 20 })).stdout;
  let text: string;
  if (components.length === 0) text = await build('infra/cluster', REPO_ROOT);
  else {
    const dir = await mkdtemp(join(tmpdir(), 'ps-overlay-'));
    try {
      // kustomize takes relative paths only.
      const rel = (p: string) => relative(dir, join(REPO_ROOT, p));
      const lines = [
        'resources:',
        `  - ${rel('infra/cluster')}`,
        'components:',
        ...components.map((c) => `  - ${rel(c)}`),
      ];
      await writeFile(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
      text = await build(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => o !== null);
}

/** Server-side applies the product's manifests (CRDs first) as the cluster admin; returns what was applied. */
export async function installProduct(admin: KubeConfig, components: string[] = []): Promise<KubernetesObject[]> {
  const api = RawObjectApi.fromKubeConfig(admin);
  const objects = (await productManifests(components)).filter((o) => o.kind !== 'Deployment');
  const crdsFirst = [...objects].sort(
    (a, b) =>
      Number(b.kind === 'CustomResourceDefinition') - Number(a.kind === 'CustomResourceDefinition') ||
      Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'),
  );
  for (const obj of crdsFirst) await api.applyJson(obj, INSTALL_MANAGER, true);
  return crdsFirst;
}

/** Writes `<dir>/<cluster>-<identity>.kubeconfig` for each product identity; returns the paths. */
export async function writeIdentityKubeconfigs(
  cluster: RealHostCluster,
  dir: string,
  prefix: string,
): Promise<Record<ProductIdentity, string>> {
  const paths = {} as Record<ProductIdentity, string>;
  for (const [name, identity] of Object.entries(PRODUCT_IDENTITIES) as Array<[ProductIdentity, ClientIdentity]>) {
    paths[name] = join(dir, `${prefix}-${name}.kubeconfig`);
    await cluster.writeKubeconfig(paths[name], identity);
  }
  return paths;
}
