/**
 * Real YurtHubs for the pools of one process-mode fleet cluster on the real control plane: the host install
 * (host-install.ts), then one hub per node, each pointed at its own pool's running pool-spirit (apiserver
 * and etcd on their 127.0.0.1 ports). Their logs are `<dir>/<node>.log`.
 */
import { join } from 'node:path';
import type { FleetCluster } from '../fleet/fleet.ts';
import { nodeName } from '../fleet/seed.ts';
import type { ProcessKubelet } from '../kubelet/process-kubelet.ts';
import type { RunningPoolSpirit } from '../kubelet/process/pool-spirit-process.ts';
import type { CertificateAuthority } from '../kube-api/index.ts';
import { installForYurtHubs } from './host-install.ts';
import { startYurtHub, type RunningYurtHub } from './hub.ts';

export interface FleetHubs {
  hubs: RunningYurtHub[];
  byPool(pool: string): RunningYurtHub[];
  /** The running pool-spirit of a pool (by its pod name ps-<pool>-…). */
  spiritOf(pool: string): RunningPoolSpirit;
  stop(): Promise<void>;
}

export function poolOfPodKey(podKey: string, pools: string[]): string | undefined {
  const name = podKey.slice(podKey.indexOf('/') + 1);
  return pools.find((p) => name.startsWith(`ps-${p}-`));
}

export async function startFleetHubs(opts: {
  cluster: FleetCluster;
  hostCa: CertificateAuthority;
  namespace: string;
  pools: string[];
  hubsPerPool: number;
  dir: string;
  /** The host's kubernetes Service ClusterIP (a SAN of each hub's serving certificate). */
  kubernetesServiceIP?: string;
}): Promise<FleetHubs> {
  const { cluster, pools } = opts;
  await installForYurtHubs(cluster.kubeConfig, opts.hostCa, opts.namespace, pools);
  const kubelet = cluster.kubelet as unknown as ProcessKubelet;
  const spiritOf = (pool: string): RunningPoolSpirit => {
    const s = kubelet.poolSpirits().find((r) => poolOfPodKey(r.podKey, pools) === pool);
    if (!s) throw new Error(`no running pool-spirit for pool ${pool}`);
    return s;
  };
  const hubs: RunningYurtHub[] = [];
  try {
    for (const pool of pools) {
      const spirit = spiritOf(pool);
      for (let j = 0; j < opts.hubsPerPool; j++) {
        hubs.push(
          await startYurtHub({
            node: nodeName(pool, j),
            pool,
            dir: join(opts.dir, 'yurthubs'),
            host: { url: cluster.url, caPem: opts.hostCa.certPem, ca: opts.hostCa, kubernetesServiceIP: opts.kubernetesServiceIP ?? '10.96.0.1' },
            coordinator: { serverAddr: spirit.apiServerUrl, storageAddr: spirit.etcd.endpoint },
          }),
        );
      }
    }
  } catch (err) {
    await Promise.all(hubs.map((h) => h.stop()));
    throw err;
  }
  return {
    hubs,
    byPool: (pool) => hubs.filter((h) => h.pool === pool),
    spiritOf,
    async stop() {
      await Promise.all(hubs.map((h) => h.stop()));
    },
  };
}
