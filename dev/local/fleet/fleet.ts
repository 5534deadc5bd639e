import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createStateTable, type StateTable } from '../../../adapters/state-table/index.ts';
import { createAuditHandler } from '../../../functions/audit/handler.ts';
import { createCloudEventsHandler } from '../../../functions/cloud-events/handler.ts';
import { createProbeHandler } from '../../../functions/probe/handler.ts';
import { createRolloutHandler } from '../../../functions/rollout/handler.ts';
import { type LocalBus, startLocalBus } from '../bus/index.ts';
import { loadRules } from '../bus/rules-from-serverless.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../dynamodb.ts';
import { CONTAINER_FACTORIES, localDeadLetters } from '../functions/containers.ts';
import { startRieFunctions } from '../functions/rie-functions.ts';
import { WorkerContainerHost } from '../functions/worker-host.ts';
import type { Handler } from '../lambda-runtime.ts';
import { LocalFunction } from '../lambda-runtime.ts';
import { type ClusterCa, createClusterCa, loadOrCreateClusterCa } from './cluster-ca.ts';
import type { ClusterThreadOptions } from './cluster-worker-protocol.ts';
import { ClusterWorkers } from './cluster-workers.ts';
import { firstErrorsOnly } from './first-errors.ts';
import { startFleetCluster } from './fleet-cluster.ts';
import type { FleetCluster, LocalFleetOptions } from './fleet-types.ts';
import { requestHeldLeases } from './held-leases.ts';
import type { LocalApiAccess } from './local-api-access.ts';
import { localObservability } from './observability.ts';
import type { FleetProgress } from './progress.ts';
import { runLimited } from './seed.ts';
import { claimStateDir, type FleetStateDir, fleetStateDir, keptClusters, prepareStateDir } from './state-dir.ts';

export type { FleetCluster, FleetForwarder, LocalFleetOptions } from './fleet-types.ts';

export interface ThreadCpu {
  main: number;
  clusterThreads: number[];
  functionThreads: number[];
}

export interface LocalFleet {
  clusters: FleetCluster[];
  bus: LocalBus;
  dynamo: LocalDynamo;
  table: StateTable;
  reconcile: LocalFunction;
  /** The rollout function: the schedule rule's tick (every minute) and spiritctl's commands. */
  rollout: LocalFunction;
  /** The leader-election probe function (schedule fan-out, per-cluster requests), routed by serverless.yml's rules. */
  probe: LocalFunction;
  /** The audit function (schedule fan-out and per-cluster audits), routed by serverless.yml's rules. */
  audit: LocalFunction;
  /** The cloud-events function (EC2 state changes, Spot warnings); inject them with bus.injectEvent. */
  cloudEvents: LocalFunction;
  /** The bus the functions send follow-up events (reconcile, audit and probe requests) to. */
  eventBusName: string;
  clusterCa: ClusterCa;
  state: FleetStateDir;
  /** Worker threads the clusters run in; 0: on the main thread. */
  clusterThreads: number;
  /** CPU seconds used so far by the main thread and by each cluster and reconcile function thread. */
  threadCpu(): Promise<ThreadCpu>;
  progress(): Promise<FleetProgress>;
  /** Resolves when every wanted pool is Available, or rejects after timeoutMs with what is missing. */
  waitConverged(timeoutMs: number, onTick?: (p: FleetProgress) => void): Promise<FleetProgress>;
  /** Adds a cluster to the running fleet (seeded, registered, forwarded, kubelet running). */
  addCluster(): Promise<FleetCluster>;
  stop(): Promise<void>;
}

/** How long stop() lets the deliveries running at that moment finish. */
const STOP_GRACE_MS = 5_000;

export const clusterId = (i: number) => `cluster-${String(i + 1).padStart(2, '0')}`;
const LOCAL_AWS = { region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

/**
 * The whole system on one machine: N local clusters seeded with pools and nodes, a forwarder and a sim
 * kubelet per cluster, the local bus routing by serverless.yml's rules to the same handlers the cloud runs
 * (in process, with a Lambda-like context, concurrency limit and timeout), and dynalite as the state table.
 */
export async function startLocalFleet(opts: LocalFleetOptions): Promise<LocalFleet> {
  const started = Date.now();
  const log = opts.log ?? (() => undefined);
  const store = opts.store ?? 'memory';
  if (opts.persist && store !== 'etcd')
    throw new Error("persist needs store 'etcd': a memory store keeps nothing to resume from");
  if (opts.clusterThreads && !runsInClusterThreads(opts))
    throw new Error('clusterThreads: only the local control plane with the sim kubelet runs in cluster threads');
  if (opts.openYurt && opts.controlPlane !== 'real')
    throw new Error(
      "openYurt: OpenYurt's CRDs need controlPlane 'real' (the local API does not serve conversion webhooks)",
    );
  const state = fleetStateDir(opts);
  await prepareStateDir(state);

  // Everything started so far, stopped in reverse if the start-up fails half-way: no headless leftovers.
  const startedParts: (() => Promise<void>)[] = [];
  const undo = async () => {
    for (const stop of startedParts.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    return await startParts();
  } catch (err) {
    await undo();
    throw err;
  }

  async function startParts(): Promise<LocalFleet> {
    const releaseStateDir = await claimStateDir(state);
    startedParts.push(releaseStateDir);
    const dynamo = await startLocalDynamo(state.persistent ? { path: state.tableDir } : {});
    startedParts.push(() => dynamo.stop());
    const tableName = opts.tableName ?? 'pool-spirit-local-state';
    await ensureTable(dynamo.client, tableName);
    const table = createStateTable({ client: dynamo.client, tableName });
    // Real nodes added later (`local nodes add --kubelet real`) sign their node certificates with it.
    const clusterCa =
      state.persistent || opts.kubelet === 'real' ? await loadOrCreateClusterCa(state.pkiDir) : await createClusterCa();

    const rules = loadRules(join(import.meta.dirname, '..', '..', '..', 'serverless.yml'));
    const eventBusName = rules.find((r) => r.target === 'reconcile' && r.pattern)?.eventBus ?? 'default';
    // The targets are closures: the functions they name are built below, before any event arrives.
    const bus = await startLocalBus({
      rules,
      targets: {
        reconcile: (event) => reconcile.invoke(event),
        rollout: (event) => rollout.invoke(event),
        probe: (event) => probe.invoke(event),
        audit: (event) => audit.invoke(event),
        cloudEvents: (event) => cloudEvents.invoke(event),
      },
      stateDir: state.dir,
      retry: { baseDelayMs: opts.retryBaseDelayMs ?? 200, maxDelayMs: 5_000 },
      onActivity: opts.onBusActivity,
    });
    startedParts.push(() => bus.stop());
    // Input that can never succeed is dead-lettered by the function itself, into its queue on the bus.
    const deadLetters = (fn: string) => localDeadLetters(bus.deadLetterQueueUrl(fn));
    const containerSettings = {
      dynamoEndpoint: dynamo.endpoint,
      tableName,
      deadLetterQueueUrl: bus.deadLetterQueueUrl('reconcile'),
    };
    const rie =
      opts.lambda === 'rie'
        ? await startRieFunctions({
            packageDir: opts.packagedDir ?? join(state.dir, 'package'),
            packageAfresh: opts.packagedDir === undefined,
            dynamoEndpoint: dynamo.endpoint,
            tableName,
            busEndpoint: bus.endpoint,
            eventBusName,
            deadLetterQueueUrl: (fn) => bus.deadLetterQueueUrl(fn),
          })
        : undefined;
    if (rie) {
      startedParts.push(() => rie.stop());
      log(`functions: the zips of npm run package (${rie.packageDir}) under aws-lambda-rie, one per container`);
    }
    // Each function's containers: in process, or under the emulator with --lambda rie.
    const container = (name: string, inProcess: () => Handler) => (rie ? () => rie.newContainer(name) : inProcess);
    const reconcileThreads =
      opts.functionThreads && !rie
        ? new WorkerContainerHost('reconcile', containerSettings, opts.functionThreads)
        : undefined;
    if (reconcileThreads) startedParts.push(() => reconcileThreads.stop());
    const reconcile = LocalFunction.perContainer(
      container(
        'reconcile',
        () => reconcileThreads?.newContainer() ?? CONTAINER_FACTORIES.reconcile(containerSettings),
      ),
      {
        name: 'reconcile',
        timeoutMs: opts.reconcileTimeoutMs ?? 60_000,
        concurrency: opts.reconcileConcurrency ?? 20,
      },
    );
    // The functions' follow-up events go through the bus's PutEvents, as in the cloud.
    const events = {
      putEvents: (entries: Parameters<LocalBus['putEvents']>[0]) => Promise.resolve(bus.putEvents(entries).Entries),
    };
    // What every fleet function is built with: the table, the bus for follow-up events, its own dead-letter
    // queue and its service's logger and metrics.
    const wiring = (fn: string, service: string) => ({
      table,
      events,
      eventBusName,
      deadLetters: deadLetters(fn),
      ...localObservability(service),
    });
    const audit = LocalFunction.perContainer(
      container('audit', () => createAuditHandler(wiring('audit', 'pool-spirit-audit'))),
      { name: 'audit', timeoutMs: 300_000, concurrency: 10 },
    );
    const cloudEvents = LocalFunction.perContainer(
      container('cloudEvents', () => createCloudEventsHandler(wiring('cloudEvents', 'pool-spirit-cloud-events'))),
      { name: 'cloudEvents', timeoutMs: 60_000, concurrency: 10 },
    );
    const rollout = LocalFunction.perContainer(
      container('rollout', () => createRolloutHandler(wiring('rollout', 'pool-spirit-rollout'))),
      { name: 'rollout', timeoutMs: 300_000, concurrency: 2 },
    );
    const probe = LocalFunction.perContainer(
      container('probe', () => createProbeHandler(wiring('probe', 'pool-spirit-probe'))),
      { name: 'probe', timeoutMs: 120_000, concurrency: 10 },
    );
    const eventBridge = new EventBridgeClient({ endpoint: bus.endpoint, ...LOCAL_AWS });
    startedParts.push(async () => eventBridge.destroy());
    log(
      `bus ${bus.endpoint} · ${rules.length} rules from serverless.yml · dynalite ${dynamo.endpoint}${state.persistent ? ` (table kept in ${state.tableDir})` : ''}`,
    );

    const clusters: FleetCluster[] = [];
    const kubeletErrors = firstErrorsOnly(log);
    const kept = await keptClusters(state);
    // Ids are handed out in order, so the highest kept one says how many clusters the last run had.
    const count = Math.max(opts.clusters, ...kept.ids.map((id) => Number(id.slice('cluster-'.length))));
    const threads = clusterThreadsFor(opts, count);
    const clusterWorkers =
      threads > 0
        ? new ClusterWorkers(
            threads,
            {
              opts: withoutCallbacks(opts),
              store,
              clusterCa,
              dynamoEndpoint: dynamo.endpoint,
              tableName,
              busEndpoint: bus.endpoint,
              eventBusName,
            },
            { log, kubeletError: (id, err) => kubeletErrors.report(id, err) },
          )
        : undefined;
    if (clusterWorkers) startedParts.push(() => clusterWorkers.stop());
    const startCluster = async (id: string): Promise<FleetCluster> => {
      const resumed = kept.seeded.has(id);
      // The thread stops what it started of a cluster that fails there.
      if (clusterWorkers) return clusterWorkers.start(id, resumed);
      // This cluster's own parts, stopped in reverse if it fails before it joins the fleet.
      const parts: (() => Promise<void>)[] = [];
      try {
        return await startFleetCluster(
          { opts, store, state, log, clusterCa, table, eventBridge, eventBusName, kubeletErrors },
          id,
          resumed,
          parts,
        );
      } catch (err) {
        for (const stop of parts.reverse()) await stop().catch(() => undefined);
        throw err;
      }
    };
    // Names are taken when a start begins, so starts in flight never share one.
    let named = clusters.length;
    const addCluster = async (): Promise<FleetCluster> => {
      const entry = await startCluster(clusterId(named++));
      clusters.push(entry);
      return entry;
    };
    // Until the fleet is returned, a failure must also stop the clusters already up.
    startedParts.push(async () => {
      for (const c of clusters) await stopCluster(c);
    });
    if (threads > 0) log(`${count} cluster(s) in ${threads} cluster thread(s)`);
    if (kept.seeded.size)
      log(
        `resuming ${kept.seeded.size} cluster(s) kept in ${state.dir}${count > kept.seeded.size ? `, starting ${count - kept.seeded.size} more` : ''}`,
      );
    // Each real control plane is its own processes (etcd, kube-apiserver, controllers), mostly waiting on its
    // own start: started together, a fleet is up in about the time of its slowest cluster. Real nodes share
    // the host's container runtime, so their clusters start one after another.
    if (opts.controlPlane === 'real' && opts.kubelet !== 'real') {
      const ids = Array.from({ length: count }, (_, i) => clusterId(i));
      named = count;
      const started = await Promise.allSettled(ids.map(startCluster));
      for (const result of started) if (result.status === 'fulfilled') clusters.push(result.value);
      const failed = started.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    } else for (let i = 0; i < count; i++) await addCluster();
    // After the forwarders are up: a lease kept from before a restart belongs to an invocation killed with it.
    const resumedIds = clusters.filter((c) => c.resumed).map((c) => c.id);
    if (resumedIds.length) {
      const requested = await requestHeldLeases(table, resumedIds, bus, eventBusName);
      if (requested)
        log(`${requested} pool(s) kept with the lease of an invocation killed with the stack: reconcile requested`);
    }

    const progress = async (): Promise<FleetProgress> => {
      const per = await Promise.all(clusters.map(async (c) => ({ id: c.id, ...(await c.convergence()) })));
      const busStats = bus.stats();
      return {
        elapsedMs: Date.now() - started,
        clusters: per,
        eventsRouted: busStats.eventsMatched,
        deadLetters: busStats.deadLettered,
        reconciles: reconcile.stats.invocations,
        errors: reconcile.stats.errors,
      };
    };

    let stopping: Promise<void> | undefined;
    return {
      clusters,
      bus,
      dynamo,
      table,
      reconcile,
      rollout,
      probe,
      audit,
      cloudEvents,
      eventBusName,
      clusterCa,
      state,
      clusterThreads: threads,
      async threadCpu() {
        const seconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
        return {
          main: seconds(process.threadCpuUsage()),
          clusterThreads: ((await clusterWorkers?.cpuUsage()) ?? []).map(seconds),
          functionThreads: ((await reconcileThreads?.cpuUsage()) ?? []).map(seconds),
        };
      },
      progress,
      addCluster,
      async waitConverged(timeoutMs, onTick) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const p = await progress();
          onTick?.(p);
          const done = p.clusters.every((c) => c.available === c.wanted && c.failing === 0);
          if (done) return p;
          if (Date.now() > deadline) {
            const missing = p.clusters
              .filter((c) => c.available < c.wanted)
              .map((c) => `${c.id} ${c.available}/${c.wanted}`);
            throw new Error(`fleet not converged after ${timeoutMs} ms: ${missing.join(', ')}`);
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      stop() {
        stopping ??= (async () => {
          await runLimited(clusters, 8, async (c) => {
            // The forwarder in place now: the soak replaces a cluster's forwarder to restart it.
            await c.forwarder.stop(2_000);
            await c.stopClients();
          });
          // Prompt: deliveries waiting for a retry (up to a minute of backoff, or a requeue's wait for a lease)
          // are dropped, as a kill drops them; a resumed fleet's forwarders resync every pool anyway. Only the
          // attempts running now finish, while the clusters still serve.
          const { dropped, stillRunning } = await bus.stopDeliveries(STOP_GRACE_MS);
          if (dropped || stillRunning)
            log(
              `stopping: ${dropped} bus deliver${dropped === 1 ? 'y' : 'ies'} not yet due dropped${stillRunning ? `, ${stillRunning} still running after ${STOP_GRACE_MS / 1000} s left behind` : ''}`,
            );
          await bus.stop();
          for (const c of clusters) await c.stopHost().catch(() => undefined);
          await clusterWorkers?.stop();
          eventBridge.destroy();
          await reconcileThreads?.stop();
          await rie?.stop();
          await dynamo.stop();
          await releaseStateDir();
        })();
        return stopping;
      },
    };
  }
}

/** Stops one cluster that joined the fleet (start-up failure path; stop() orders the whole fleet itself). */
async function stopCluster(c: FleetCluster): Promise<void> {
  await c.stopClients().catch(() => undefined);
  await c.stopHost().catch(() => undefined);
}

/**
 * The cluster's local API (its request log, fault injection, storage), on whichever thread it runs: only
 * clusters on control plane `local` have one.
 */
export function localApiOf(c: FleetCluster): LocalApiAccess {
  if (!c.api) throw new Error(`${c.id} runs on the real control plane: it has no local API request log or storage`);
  return c.api;
}

/** Below this many clusters a fleet keeps them on the main thread: a thread's start-up costs more than it saves. */
export const CLUSTER_THREADS_FROM = 4;

/**
 * Cluster threads when not asked for: none for a small fleet (the default `local up`, most tests) or on one
 * core, else one per core, as many as there are clusters at most. Only the embedded API with the sim kubelet
 * runs in them.
 */
export function defaultClusterThreads(clusters: number, cores = availableParallelism()): number {
  return clusters < CLUSTER_THREADS_FROM || cores < 2 ? 0 : Math.min(clusters, cores);
}

/** A real control plane and process-mode pods are processes already, started and watched from this thread. */
const runsInClusterThreads = (opts: LocalFleetOptions) =>
  (opts.controlPlane ?? 'local') === 'local' && (opts.kubelet ?? 'sim') === 'sim';

function clusterThreadsFor(opts: LocalFleetOptions, clusters: number): number {
  if (opts.clusterThreads !== undefined) return opts.clusterThreads;
  return runsInClusterThreads(opts) ? defaultClusterThreads(clusters) : 0;
}

/** The options as data for a cluster thread: the callbacks stay here (log lines come back as messages). */
function withoutCallbacks(opts: LocalFleetOptions): ClusterThreadOptions {
  const { log: _log, onBusActivity: _tap, ...data } = opts;
  return data;
}
