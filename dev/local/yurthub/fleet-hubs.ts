/**
 * Real YurtHubs for the pools of one process-mode fleet cluster on the real control plane (installed with
 * infra/cluster/components/yurt-coordinator-compat, whose kube-system objects the reconciler fills): the host
 * install (host-install.ts), then one hub per node, each pointed at its own pool's pool-spirit through two links per
 * pool (apiserver, etcd: stable 127.0.0.1 ports that follow the pool-spirit when it restarts on new ports, as
 * a Service's ClusterIP does) and at the host through a link of its own (so one node can be cut off while the
 * others are not). Their logs are `<dir>/yurthubs/<node>.log`.
 */
import { join } from 'node:path';
import type { FleetCluster } from '../fleet/fleet.ts';
import { nodeName } from '../fleet/seed.ts';
import type { RunningPoolSpirit } from '../kubelet/process/pool-spirit-process.ts';
import { ProcessKubelet } from '../kubelet/process-kubelet.ts';
import type { CertificateAuthority } from '../pki.ts';
import { installForYurtHubs } from './host-install.ts';
import { type RunningYurtHub, startYurtHub } from './hub.ts';
import { hostPort, type Link, startLink } from './link.ts';

export interface FleetHubs {
  hubs: RunningYurtHub[];
  byPool(pool: string): RunningYurtHub[];
  /** The running pool-spirit of a pool (by its pod name ps-<pool>-…). */
  spiritOf(pool: string): RunningPoolSpirit;
  /** The node's path to the host apiserver. */
  hostLinkOf(node: string): Link;
  /**
   * Resolves once every running hub answers /v1/healthz and has joined its pool's election (leader or
   * follower, exactly one leader per pool); rejects after `timeoutMs` naming the hubs that have not.
   */
  waitElected(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export function poolOfPodKey(podKey: string, pools: string[]): string | undefined {
  const name = podKey.slice(podKey.indexOf('/') + 1);
  return pools.find((p) => name.startsWith(`ps-${p}-`));
}

export async function startFleetHubs(opts: {
  cluster: FleetCluster;
  hostCa: CertificateAuthority;
  pools: string[];
  hubsPerPool: number;
  dir: string;
  /** The host's kubernetes Service ClusterIP (a SAN of each hub's serving certificate). */
  kubernetesServiceIP?: string;
}): Promise<FleetHubs> {
  const { cluster, pools } = opts;
  await installForYurtHubs(cluster.kubeConfig, opts.hostCa);
  const kubelet = cluster.kubelet;
  if (!(kubelet instanceof ProcessKubelet)) {
    throw new Error(`real YurtHubs need real pool-spirits: start cluster ${cluster.id} with the process kubelet`);
  }
  const spiritOf = (pool: string): RunningPoolSpirit => {
    const s = kubelet.poolSpirits().find((r) => poolOfPodKey(r.podKey, pools) === pool);
    if (!s) throw new Error(`no running pool-spirit for pool ${pool}`);
    return s;
  };
  const hubs: RunningYurtHub[] = [];
  const links: Link[] = [];
  const hostLinks = new Map<string, Link>();
  const closeAll = async () => {
    await Promise.all(hubs.map((h) => h.stop()));
    await Promise.all(links.map((l) => l.close()));
  };
  try {
    for (const pool of pools) {
      spiritOf(pool);
      const api = await startLink(() => hostPort(spiritOf(pool).apiServerUrl));
      const etcd = await startLink(() => hostPort(spiritOf(pool).etcd.endpoint));
      links.push(api, etcd);
      for (let j = 0; j < opts.hubsPerPool; j++) {
        const node = nodeName(pool, j);
        const toHost = await startLink(() => hostPort(cluster.url));
        links.push(toHost);
        hostLinks.set(node, toHost);
        hubs.push(
          await startYurtHub({
            node,
            pool,
            dir: join(opts.dir, 'yurthubs'),
            host: {
              url: toHost.url('https'),
              caPem: opts.hostCa.certPem,
              ca: opts.hostCa,
              kubernetesServiceIP: opts.kubernetesServiceIP ?? '10.96.0.1',
            },
            coordinator: { serverAddr: api.url('https'), storageAddr: etcd.url('https') },
          }),
        );
      }
    }
  } catch (err) {
    await closeAll();
    throw err;
  }
  return {
    hubs,
    byPool: (pool) => hubs.filter((h) => h.pool === pool),
    spiritOf,
    hostLinkOf(node) {
      const link = hostLinks.get(node);
      if (!link) throw new Error(`no hub for node ${node}`);
      return link;
    },
    async waitElected(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let behind: string[] = [];
      while (Date.now() < deadline) {
        const live = hubs.filter((h) => h.process.ended() === undefined);
        const states = await Promise.all(
          live.map(async (h) => ({ h, healthy: await h.healthy(), role: await h.role() })),
        );
        behind = states
          .filter((x) => !x.healthy || (x.role !== 'leader' && x.role !== 'follower'))
          .map((x) => `${x.h.node} (${x.healthy ? x.role : 'not healthy'})`);
        const leaders = new Map<string, number>();
        for (const x of states) if (x.role === 'leader') leaders.set(x.h.pool, (leaders.get(x.h.pool) ?? 0) + 1);
        const poolsWithoutOneLeader = pools.filter((p) => leaders.get(p) !== 1);
        if (behind.length === 0 && poolsWithoutOneLeader.length === 0) return;
        if (behind.length === 0)
          behind = poolsWithoutOneLeader.map((p) => `pool ${p} (${leaders.get(p) ?? 0} leaders)`);
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(
        `YurtHubs not elected after ${timeoutMs} ms: ${behind.join(', ')}; logs in ${join(opts.dir, 'yurthubs')}`,
      );
    },
    stop: closeAll,
  };
}
