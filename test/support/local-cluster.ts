import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { CLUSTER_CA_CONFIGMAP } from '../../adapters/kubernetes/index.ts';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { createIfMissing, infraManifests } from '../../dev/local/fleet/seed.ts';
import { type LocalCluster, type LocalClusterOptions, startLocalCluster } from '../../dev/local/kube-api/index.ts';
import { waitFor } from './wait.ts';

export { waitFor };

/** What a test reaches a cluster with, whoever serves it (test/support/real-cluster.ts serves the real one). */
export interface TestClusterAccess {
  kubeconfigPath: string;
  kc: KubeConfig;
  api: RawObjectApi;
  stop(): Promise<void>;
}

export interface TestCluster extends TestClusterAccess {
  cluster: LocalCluster;
}

/**
 * The cluster's CA where the product reads it (ConfigMap kube-system/kube-root-ca.crt), as
 * kube-controller-manager publishes it: YurtHub node certificates chain to it.
 */
export async function publishClusterCa(api: RawObjectApi, caPem: string): Promise<void> {
  await createIfMissing(api, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CLUSTER_CA_CONFIGMAP.name, namespace: CLUSTER_CA_CONFIGMAP.namespace },
    data: { 'ca.crt': caPem },
  } as KubernetesObject);
}

/** Creates the NodePool (OpenYurt's) and PoolSpirit CRDs, and waits until both are served. */
export async function applyCrds(api: RawObjectApi): Promise<void> {
  for (const crd of [
    ...(await infraManifests('crds/nodepool.yaml')),
    ...(await infraManifests('crds/poolspirit.yaml')),
  ]) {
    await createIfMissing(api, crd);
  }
  await waitFor(
    async () => {
      await api.list('apps.openyurt.io/v1beta1', 'NodePool');
      await api.list('poolspirit.io/v1alpha1', 'PoolSpirit');
      return true;
    },
    10_000,
    'CRDs served',
  );
}

/** A local cluster with a kubeconfig on disk and a client-node client, for end-to-end tests. */
export async function startTestCluster(opts: LocalClusterOptions & { crds?: boolean } = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-cluster-'));
  const cluster = await startLocalCluster({ port: 0, ...opts });
  const kubeconfigPath = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfigPath);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const api = RawObjectApi.fromKubeConfig(kc);
  if (opts.crds !== false) await applyCrds(api);
  return {
    cluster,
    kubeconfigPath,
    kc,
    api,
    async stop() {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type { KubernetesObject };
