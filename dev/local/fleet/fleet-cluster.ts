import { join } from 'node:path';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KubeConfig } from '@kubernetes/client-node';
import { eventBridgePutEvents } from '../../../adapters/eventbridge/put-events.ts';
import { registerCluster, type StateTable } from '../../../adapters/state-table/index.ts';
import { createLogger } from '../../../agent/log.ts';
import { Forwarder } from '../../../forwarder/forwarder.ts';
import { type LocalCluster, startLocalCluster } from '../kube-api/index.ts';
import { SimLeaderRenewals, simulateAgent } from '../kubelet/agent-sim.ts';
import { ProcessKubelet } from '../kubelet/process-kubelet.ts';
import { startPoolNodes } from '../kubelet/real/pool-nodes.ts';
import type { RealNode } from '../kubelet/real/real-node.ts';
import { podReady, SimKubelet } from '../kubelet/sim-kubelet.ts';
import { type RunningYurtManager, startYurtManager } from '../openyurt/yurt-manager.ts';
import type { RealHostCluster } from '../real-cluster/control-plane.ts';
import { startRealFleetHost } from '../real-cluster/fleet-host.ts';
import { type ClusterCa, clusterAuthority } from './cluster-ca.ts';
import { ClusterProgressTracker } from './cluster-progress.ts';
import { type ClusterStorage, startClusterStorage } from './cluster-storage.ts';
import type { FleetCluster, FleetForwarder, LocalFleetOptions } from './fleet-types.ts';
import { inProcessApiAccess } from './local-api-access.ts';
import { nodeName, PRODUCT_NAMESPACE, poolName, seedCluster } from './seed.ts';
import { type FleetStateDir, markSeeded } from './state-dir.ts';

/** What every cluster of a fleet shares. */
export interface FleetContext {
  opts: LocalFleetOptions;
  store: 'memory' | 'etcd';
  state: FleetStateDir;
  log: (line: string) => void;
  clusterCa: ClusterCa;
  table: StateTable;
  eventBridge: EventBridgeClient;
  eventBusName: string;
  kubeletErrors: { report(clusterId: string, err: Error): void };
}

/**
 * One cluster of the local fleet: its storage, API, seed (unless resumed), registration, kubelet, forwarder
 * and progress watch. Each part is pushed onto `parts` as it starts, so the caller can stop a cluster that
 * failed half-way.
 */
export async function startFleetCluster(
  ctx: FleetContext,
  id: string,
  resumed: boolean,
  parts: (() => Promise<void>)[],
): Promise<FleetCluster> {
  const { opts, state, log, clusterCa, table, eventBridge, eventBusName, kubeletErrors } = ctx;
  const host =
    opts.controlPlane === 'real' ? await startRealHost(ctx, id, parts) : await startLocalHost(ctx, id, parts);
  // A real control plane keeps nothing between runs (its etcd is in /dev/shm): it is always seeded anew.
  if (opts.controlPlane === 'real') resumed = false;
  const { kubeconfigPath, kubeConfig } = host;
  // A resumed cluster keeps what it had: pools deleted with kubectl before the crash stay deleted.
  // A real OpenYurt cluster runs its release's yurt-manager: its webhooks judge the pools seeded below, and it
  // serves the conversion of OpenYurt's CRDs.
  let yurtManager: RunningYurtManager | undefined;
  const openYurt = opts.openYurt;
  const afterCrds =
    openYurt && host.real
      ? async () => {
          const real = host.real!;
          const started = await startYurtManager({
            cluster: real,
            release: openYurt,
            log: (line) => log(`${id} ${line}`),
            ...(opts.yurtManagerControllers ? { controllers: opts.yurtManagerControllers } : {}),
          });
          yurtManager = started;
          parts.push(() => started.stop());
          log(`${id} yurt-manager ${started.release}: ready in ${started.readyMs} ms (pid ${started.pid})`);
        }
      : undefined;
  const realKubelet = opts.kubelet === 'real';
  if (realKubelet && !host.real)
    throw new Error("kubelet 'real' joins real nodes to a real control plane: add controlPlane 'real'");
  await seedCluster(
    kubeConfig,
    // Real nodes register themselves (below): the seed creates none.
    resumed ? { pools: 0, nodesPerPool: 0, cloudPools: 0 } : realKubelet ? { ...opts, nodesPerPool: 0 } : opts,
    clusterCa.certPem,
    afterCrds ? { afterCrds } : {},
  );
  if (!resumed) await markSeeded(state, id);
  await registerCluster(
    table,
    { id, access: { kind: 'kubeconfig-file', path: host.functionsKubeconfigPath }, labels: { environment: 'local' } },
    new Date(),
  );
  const simulateLeader = opts.simulateLeader ?? true;
  // Sim mode only: process mode runs the real agent, which renews what it reports itself.
  const leaderRenewals: SimLeaderRenewals | undefined =
    (opts.kubelet ?? 'sim') === 'sim' && simulateLeader
      ? new SimLeaderRenewals(kubeConfig, {
          podReady: (key): boolean => {
            const pod: Record<string, unknown> | undefined = kubelet?.pods.get(key);
            return pod !== undefined && podReady(pod);
          },
          everyMs: opts.leaderRenewMs,
          onError: (err) => kubeletErrors.report(id, err),
        })
      : undefined;
  if (leaderRenewals) parts.push(async () => leaderRenewals.stop());
  const realNodes =
    realKubelet && host.real
      ? await startRealPoolNodes(host.real, kubeConfig, opts, (line) => log(`${id} ${line}`), parts)
      : undefined;
  const kubelet: SimKubelet | undefined = realNodes
    ? undefined
    : opts.kubelet === 'process'
      ? new ProcessKubelet({
          kubeConfig,
          controlPlane: host.kubeletControlPlane,
          hostKubeconfigPath: host.agentKubeconfigPath,
          readyDelayMs: opts.readyDelayMs ?? 100,
          unhealthyVersions: opts.unhealthyVersions?.[id] ?? [],
          // The agents' warnings go where the fleet logs, not to stdout (the live view owns it).
          agentOptions: { logger: createLogger({ level: 'warn', base: { cluster: id }, write: log }) },
          // No YurtHub runs here: a stand-in elects the leader through the real pool-spirit, as a node would.
          leaderStandIn: simulateLeader ? { clusterCa: clusterAuthority(clusterCa) } : undefined,
          onError: (err) => kubeletErrors.report(id, err),
        })
      : new SimKubelet({
          kubeConfig,
          controlPlane: host.kubeletControlPlane,
          readyDelayMs: opts.readyDelayMs ?? 100,
          unhealthyVersions: opts.unhealthyVersions?.[id] ?? [],
          // Beside its local API (same thread), the stand-in reads the API's caches instead of HTTP watches.
          caches: host.cluster?.objectCaches,
          onPodReady: async (pod): Promise<void> =>
            leaderRenewals?.track(await simulateAgent(kubeConfig, pod, { simulateLeader }), pod),
          onError: (err) => kubeletErrors.report(id, err),
        });
  if (kubelet) {
    parts.push(async () => kubelet.stop());
    await kubelet.start();
  }
  // Pods that were Ready before the restart never become Ready again: the sim agent reports them again, as a
  // restarted agent does, so their leaders are renewed again. Through the kubelet's queue, retried there: a
  // report can fail (its pool's bootstrap ConfigMap deleted before the restart) and must not fail the start.
  if (resumed && leaderRenewals) kubelet?.reportReadyAgain();
  const forwarder = new Forwarder({
    clusterId: id,
    kubeConfig: host.forwarderKubeConfig,
    bus: eventBridgePutEvents(eventBridge),
    eventBusName,
    namespace: PRODUCT_NAMESPACE,
    ...(opts.forwarderCoalesceWindowMs !== undefined
      ? { sender: { coalesceWindowMs: opts.forwarderCoalesceWindowMs } }
      : {}),
  });
  forwarder.start();
  parts.push(async () => void (await forwarder.stop(2_000)));
  const progressTracker = new ClusterProgressTracker(kubeConfig);
  parts.push(async () => progressTracker.stop());
  await progressTracker.start();
  log(
    `${id} ${resumed ? 'resumed' : 'serving'} at ${host.url} (${host.describe}) · kubectl --kubeconfig ${kubeconfigPath} get poolspirits`,
  );
  return {
    id,
    url: host.url,
    thread: 'main',
    cluster: host.cluster,
    storage: host.storage,
    real: host.real,
    ...(yurtManager ? { yurtManager } : {}),
    api: host.cluster && inProcessApiAccess(host.cluster),
    resumed,
    kubeconfigPath,
    kubeConfig,
    forwarder: fleetForwarder(forwarder),
    kubelet,
    ...(realNodes ? { realNodes } : {}),
    leaderRenewals,
    convergence: async () => progressTracker.current(),
    async stopClients() {
      await yurtManager?.stop();
      await forwarder.stop(2_000).catch(() => undefined);
      await kubelet?.stop();
      await Promise.all((realNodes ?? []).map((n) => n.stop()));
      leaderRenewals?.stop();
      progressTracker.stop();
    },
    async stopHost() {
      try {
        await host.cluster?.stop();
        await host.real?.stop();
      } finally {
        await host.storage?.stop();
      }
    },
  };
}

/** Kubelet `real`: `nodesPerPool` real nodes for each seeded pool, as the seed names them. */
async function startRealPoolNodes(
  real: RealHostCluster,
  admin: KubeConfig,
  opts: LocalFleetOptions,
  log: (line: string) => void,
  parts: (() => Promise<void>)[],
): Promise<RealNode[]> {
  const nodes = Array.from({ length: opts.pools }, (_, i) => poolName(i)).flatMap((pool) =>
    Array.from({ length: opts.nodesPerPool }, (_, j) => ({ name: nodeName(pool, j), pool })),
  );
  const started = await startPoolNodes({ controlPlane: real, admin, nodes, log });
  parts.push(async () => void (await Promise.all(started.map((n) => n.stop()))));
  return started;
}

/** A forwarder as the fleet exposes it (FleetForwarder: the same for one in a cluster thread). */
export function fleetForwarder(forwarder: Forwarder): FleetForwarder {
  return { stop: (deadlineMs) => forwarder.stop(deadlineMs), stats: async () => forwarder.stats() };
}

/** A cluster's control plane and the credentials each part of the fleet reaches it with. */
interface FleetHost {
  url: string;
  describe: string;
  /** Admin access: seeding, the kubelet, the progress view, a user's kubectl. */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** What the cluster is registered with: the functions' identity. */
  functionsKubeconfigPath: string;
  forwarderKubeConfig: KubeConfig;
  /** The host kubeconfig process-mode agents report with. */
  agentKubeconfigPath: string;
  kubeletControlPlane: 'sim' | 'real';
  cluster?: LocalCluster;
  storage?: ClusterStorage;
  real?: RealHostCluster;
}

/** The embedded local API (no authentication): every part uses the one kubeconfig. */
async function startLocalHost(ctx: FleetContext, id: string, parts: (() => Promise<void>)[]): Promise<FleetHost> {
  const storage = await startClusterStorage(ctx.store, id, { etcdDataDir: ctx.state.etcdDataDir(id), log: ctx.log });
  parts.push(() => storage.stop());
  const cluster = await startLocalCluster({ port: 0, name: id, storage: storage.storage });
  parts.push(() => cluster.stop());
  const kubeconfigPath = join(ctx.state.kubeconfigDir, `${id}.kubeconfig`);
  await cluster.writeKubeconfig(kubeconfigPath);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return {
    url: cluster.url,
    describe: `${ctx.store} store`,
    kubeconfigPath,
    kubeConfig,
    functionsKubeconfigPath: kubeconfigPath,
    forwarderKubeConfig: kubeConfig,
    agentKubeconfigPath: kubeconfigPath,
    kubeletControlPlane: 'sim',
    cluster,
    storage,
  };
}

/** The real control plane: the product installed from infra/cluster, each part as its own identity. */
async function startRealHost(ctx: FleetContext, id: string, parts: (() => Promise<void>)[]): Promise<FleetHost> {
  const host = await startRealFleetHost(id, {
    clusterCa: ctx.clusterCa,
    kubeconfigDir: ctx.state.kubeconfigDir,
    log: ctx.log,
    components: ctx.opts.productComponents,
  });
  parts.push(() => host.cluster.stop());
  return {
    url: host.cluster.url,
    describe: 'real control plane: kube-apiserver, kube-controller-manager, kube-scheduler, etcd',
    kubeconfigPath: host.adminKubeconfigPath,
    kubeConfig: host.admin,
    functionsKubeconfigPath: host.identities.reconciler,
    forwarderKubeConfig: host.kubeConfigOf('forwarder'),
    agentKubeconfigPath: host.identities.agent,
    kubeletControlPlane: 'real',
    real: host.cluster,
  };
}
