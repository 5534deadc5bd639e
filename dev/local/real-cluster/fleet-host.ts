/**
 * A cluster of the local fleet on the real control plane (`--control-plane real`): the real host cluster
 * (control-plane.ts), signed by the fleet's cluster CA so YurtHub-style node certificates chain to it, with
 * the product installed as an operator would (install.ts) and a kubeconfig per product identity. The fleet
 * then seeds it, registers it with the functions' identity, runs the forwarder as the forwarder's identity,
 * the agents as the agents' identity, and the kubelet (nodes only) as the admin.
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterCa } from '../fleet/cluster-ca.ts';
import { clusterAuthority } from '../fleet/cluster-ca.ts';
import { type RealHostCluster, startRealHostCluster } from './control-plane.ts';
import { installProduct, type ProductIdentity, writeIdentityKubeconfigs } from './install.ts';

export interface RealFleetHost {
  cluster: RealHostCluster;
  /** The admin kubeconfig, copied where the fleet keeps kubeconfigs (what a user's kubectl uses). */
  adminKubeconfigPath: string;
  admin: KubeConfig;
  /** Kubeconfig file per product identity. */
  identities: Record<ProductIdentity, string>;
  kubeConfigOf(identity: ProductIdentity): KubeConfig;
}

export async function startRealFleetHost(
  id: string,
  opts: {
    clusterCa: ClusterCa;
    kubeconfigDir: string;
    log?: (line: string) => void;
    /** Opt-in components of infra/cluster installed with it (paths from the repository root). */
    components?: string[];
  },
): Promise<RealFleetHost> {
  const cluster = await startRealHostCluster({
    name: id,
    ca: clusterAuthority(opts.clusterCa),
    log: opts.log ? (line) => opts.log!(`${id} ${line}`) : undefined,
  });
  try {
    await installProduct(cluster.kubeConfig, opts.components);
    const identities = await writeIdentityKubeconfigs(cluster, opts.kubeconfigDir, id);
    const adminKubeconfigPath = join(opts.kubeconfigDir, `${id}.kubeconfig`);
    await copyFile(cluster.kubeconfigPath, adminKubeconfigPath);
    return {
      cluster,
      adminKubeconfigPath,
      admin: cluster.kubeConfig,
      identities,
      kubeConfigOf(identity) {
        const kc = new KubeConfig();
        kc.loadFromFile(identities[identity]);
        return kc;
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
