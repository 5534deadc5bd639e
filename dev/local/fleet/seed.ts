import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { servedNodePoolApiVersion } from '../../../forwarder/watched-resources.ts';
import { mapLimited } from '../../../shared/map-limited.ts';
import { type OpenYurtRelease, requireOpenYurtCrds } from '../kube-bins/index.ts';

const root = join(import.meta.dirname, '..', '..', '..');

export interface FleetShape {
  /** Edge pools per cluster (each gets a pool-spirit). */
  pools: number;
  nodesPerPool: number;
  /** Extra Cloud pools per cluster (they must get nothing). */
  cloudPools?: number;
  /** Labels every seeded edge NodePool carries (e.g. poolspirit.io/yurt-coordinator=compat). */
  edgePoolLabels?: Record<string, string>;
  /**
   * OpenYurt's own CRDs of this release instead of the project's NodePool CRD (infra/crds/nodepool.yaml), as a
   * real OpenYurt cluster has them, their conversion webhook included: on the real control plane the release's
   * yurt-manager serves it (dev/local/fleet/fleet-cluster.ts); elsewhere nothing does.
   */
  openYurt?: OpenYurtRelease;
  /**
   * yurt-manager's `--controllers` where it runs (`openYurt` on the real control plane); default its harness's
   * for the release (DEFAULT_CONTROLLERS in dev/local/openyurt/yurt-manager.ts).
   */
  yurtManagerControllers?: string[];
}

export const PRODUCT_NAMESPACE = 'pool-spirit-system';
export const NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';

/** Reads every YAML document of a file under infra/. */
export async function infraManifests(relative: string): Promise<KubernetesObject[]> {
  const text = await readFile(join(root, 'infra', relative), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter(Boolean);
}

export function nodePool(
  name: string,
  type: 'Edge' | 'Cloud',
  apiVersion = 'apps.openyurt.io/v1beta1',
): KubernetesObject & { spec: object } {
  return { apiVersion, kind: 'NodePool', metadata: { name }, spec: { type } };
}

/** OpenYurt's own CRDs of a release, from its module (scripts/kube-bins.sh): every one, as its chart installs them. */
export async function openYurtCrds(release: OpenYurtRelease): Promise<KubernetesObject[]> {
  const dir = requireOpenYurtCrds(release);
  const docs: KubernetesObject[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    const text = await readFile(join(dir, file), 'utf8');
    docs.push(
      ...parseAllDocuments(text)
        .map((d) => d.toJS() as KubernetesObject | null)
        .filter((d) => d !== null),
    );
  }
  return docs;
}

export function edgeNode(
  name: string,
  pool: string,
  ready = true,
): KubernetesObject & { spec: object; status: object } {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { [NODEPOOL_LABEL]: pool, 'kubernetes.io/hostname': name, 'node-role.kubernetes.io/edge': '' },
    },
    spec: { providerID: `local://${name}` },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'KubeletReady' : 'KubeletNotReady',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
      // What a kubelet reports when it registers (every field, as a real node has them).
      nodeInfo: {
        architecture: 'amd64',
        bootID: `${name}-boot`,
        containerRuntimeVersion: 'containerd://1.7.0',
        kernelVersion: '6.1.0',
        kubeProxyVersion: 'v1.32.0',
        kubeletVersion: 'v1.32.0',
        machineID: `${name}-machine`,
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        systemUUID: `${name}-uuid`,
      },
    },
  };
}

export const poolName = (i: number) => `pool-${String(i).padStart(2, '0')}`;
export const nodeName = (pool: string, j: number) => `${pool}-node-${j}`;

/** Creates an object, tolerating one that already exists (seeding is re-runnable). */
export async function createIfMissing(api: RawObjectApi, obj: KubernetesObject): Promise<boolean> {
  try {
    await api.createJson(obj);
    return true;
  } catch (err: any) {
    if (err?.code === 409) return false;
    throw new Error(`seeding ${obj.kind} ${obj.metadata?.name}: ${err?.body?.message ?? err.message}`);
  }
}

/** Creates a Node, trying again for a while where an admission webhook does not know its pool yet. */
async function createWhenPoolKnown(api: RawObjectApi, node: KubernetesObject, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await createIfMissing(api, node);
    } catch (err) {
      const poolUnknown = /admission webhook .* denied the request: NodePool\S* "[^"]+" not found/.test(String(err));
      if (!poolUnknown || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Brings a fresh local cluster to what a real OpenYurt cluster with the product installed has: the CRDs,
 * the product namespace, the cluster CA published as kube-root-ca.crt, and NodePools with their Nodes.
 */
export async function seedCluster(
  kc: KubeConfig,
  shape: FleetShape,
  clusterCaPem: string,
  hooks: { afterCrds?: () => Promise<void> } = {},
): Promise<void> {
  const api = RawObjectApi.fromKubeConfig(kc);
  const nodePoolCrds = shape.openYurt ? await openYurtCrds(shape.openYurt) : await infraManifests('crds/nodepool.yaml');
  for (const crd of [...nodePoolCrds, ...(await infraManifests('crds/poolspirit.yaml'))]) {
    await createIfMissing(api, crd);
  }
  await waitForCrds(kc, ['nodepools.apps.openyurt.io', 'poolspirits.poolspirit.io']);
  // What must run before the pools exist, as on a real cluster (yurt-manager's NodePool webhooks).
  await hooks.afterCrds?.();
  // Pools are written in the version the product reads: with OpenYurt's CRDs any other one needs yurt-manager's
  // conversion webhook.
  const nodePoolApiVersion = await servedNodePoolApiVersion(api);
  for (const ns of ['kube-system', PRODUCT_NAMESPACE]) {
    await createIfMissing(api, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  await createIfMissing(api, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace: 'kube-system' },
    data: { 'ca.crt': clusterCaPem },
  } as KubernetesObject);
  const pools: KubernetesObject[] = [];
  const nodes: KubernetesObject[] = [];
  for (let i = 0; i < shape.pools; i++) {
    const pool = poolName(i);
    const np = nodePool(pool, 'Edge', nodePoolApiVersion);
    if (shape.edgePoolLabels) np.metadata = { ...np.metadata, labels: { ...shape.edgePoolLabels } };
    pools.push(np);
    for (let j = 0; j < shape.nodesPerPool; j++) nodes.push(edgeNode(nodeName(pool, j), pool));
  }
  for (let i = 0; i < (shape.cloudPools ?? 0); i++) pools.push(nodePool(`cloud-${i}`, 'Cloud', nodePoolApiVersion));
  // Pools before their nodes: yurt-manager's Node webhook refuses a node of a pool it does not know yet. It
  // reads pools from its informer, a moment behind the apiserver, so a refused node is tried again, as a
  // kubelet registering its node does.
  await runLimited(pools, 16, (o) => createIfMissing(api, o));
  await runLimited(nodes, 16, (o) => createWhenPoolKnown(api, o));
}

async function waitForCrds(kc: KubeConfig, names: string[], timeoutMs = 10_000): Promise<void> {
  const api = RawObjectApi.fromKubeConfig(kc);
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd: any = await api.read({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name },
      });
      if ((crd.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Runs fn over items with at most `limit` in flight (results discarded). */
export async function runLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  await mapLimited(items, limit, fn);
}
