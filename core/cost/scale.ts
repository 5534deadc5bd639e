/**
 * Where the design stops scaling: each limit's usage for a fleet, from the measured per-pool figures
 * (measured-profile.ts), the functions' settings (serverless.yml) and AWS's quotas (quotas.ts), and the fleet
 * size at which it is reached. Pure arithmetic; `spiritctl cost limits` prints it (docs/scale.md).
 */
import { MAX_ENTRIES_PER_CALL } from '../../events/put-events-limits.ts';
import type { FunctionName, UsageProfile } from './counts.ts';
import { DEFAULT_USAGE } from './model.ts';
import { QUOTAS } from './quotas.ts';

export interface FunctionLimits {
  reservedConcurrency: number | null;
  timeoutSeconds: number;
  maximumEventAgeSeconds: number;
}

export interface ScaleSettings {
  /** The leader probe's schedule: a fleet pass must fit between two ticks (serverless.yml, as the cost model's). */
  probeEverySeconds: number;
  /** Share of the fleet a rollout wave updates at once (the rollouts' maxConcurrency, e.g. 25%). */
  rolloutWaveFraction: number;
  /** A fleet-wide change: every pool's notices arrive within this many seconds. */
  burstSeconds: number;
  /** Characters one account's statement adds to the central bus's resource policy (cross-account PutEvents). */
  busPolicyCharactersPerAccount: number;
}

export const DEFAULT_SCALE_SETTINGS: ScaleSettings = {
  probeEverySeconds: DEFAULT_USAGE.probeEveryMinutes * 60,
  rolloutWaveFraction: 0.25,
  burstSeconds: 60,
  busPolicyCharactersPerAccount: 250,
};

export interface Limit {
  id: string;
  what: string;
  /** The bound and where it comes from. */
  limit: { value: number; unit: string; source: string };
  /** This fleet's figure against the bound (same unit). */
  atFleet: number;
  /** atFleet ÷ limit.value: 1 or more means reached. */
  utilisation: number;
  /** Pools (at this fleet's pools per cluster) at which the limit is reached; null when it does not grow with the fleet. */
  reachedAtPools: number | null;
  /** Clusters at which the limit is reached (same pools per cluster). */
  reachedAtClusters: number | null;
  /** How it is reached and what moves it. */
  how: string;
  change: string;
}

export interface ScaleInput {
  clusters: number;
  poolsPerCluster: number;
  profile: UsageProfile;
  functions: Record<FunctionName, FunctionLimits>;
  settings?: Partial<ScaleSettings>;
  /** Accounts whose forwarders send to the central bus. */
  accounts?: number;
}

const per = (ms: number | undefined, n: number | undefined) => (ms ?? 0) / Math.max(1e-9, n ?? 0);
/** A figure below a few ms loses its meaning rounded to a whole ms. */
const round1 = (ms: number) => Math.round(ms * 10) / 10;
/** How many pools a cluster's run fits in its timeout, or that its pools add no time the bench resolves. */
function poolsInTimeout(timeoutSeconds: number, msPerCluster: number, msPerPool: number): string {
  if (!(msPerPool > 0)) return 'its pools add no time the bench resolves';
  return `at most ${Math.floor(Math.max(0, timeoutSeconds * 1000 - msPerCluster) / msPerPool)} pools per cluster`;
}

/** Every limit for this fleet, first reached first. */
export function scaleLimits(input: ScaleInput): Limit[] {
  const s = { ...DEFAULT_SCALE_SETTINGS, ...input.settings };
  const { clusters: C, poolsPerCluster: M, profile: p, functions: fn } = input;
  const sizes = p.sizes ?? { rolloutProgressItemBytes: 0, putEventsEntriesPerCall: 1 };
  const limits: Limit[] = [];
  const add = (
    l: Omit<Limit, 'utilisation' | 'reachedAtPools' | 'reachedAtClusters'>,
    clustersAtLimit: number | null,
  ) =>
    limits.push({
      ...l,
      utilisation: l.atFleet / l.limit.value,
      reachedAtClusters: clustersAtLimit === null ? null : Math.max(0, clustersAtLimit),
      reachedAtPools: clustersAtLimit === null ? null : Math.max(0, clustersAtLimit * M),
    });

  // 1. The scheduled probe is fanned out: one invocation per cluster probes its pools one after another, so
  // each cluster's probe has the whole timeout, whatever the fleet's size; the fan-out invocation itself
  // sends one PutEvents entry per cluster, MAX_ENTRIES_PER_CALL to a call.
  const probeMsPerPool = p.probe.perPool.billedMs.probe ?? 0;
  // What every cluster's probe pays whatever its pools (its reads of the cluster and of the table, its run record).
  const probeMsPerCluster = p.probe.perCluster.billedMs.probe ?? 0;
  const clusterProbeS = (probeMsPerCluster + M * probeMsPerPool) / 1000;
  add(
    {
      id: 'probe-run-timeout',
      what: "one cluster's leader probe finishes within its timeout",
      limit: {
        value: fn.probe.timeoutSeconds,
        unit: 's per cluster probe',
        source: 'serverless.yml functions.probe.timeout (Lambda allows up to 900 s)',
      },
      atFleet: clusterProbeS,
      how: `one invocation per cluster, its pools one after another, ${Math.round(probeMsPerCluster)} ms a cluster and ${round1(probeMsPerPool)} ms per pool (measured): ${poolsInTimeout(fn.probe.timeoutSeconds, probeMsPerCluster, probeMsPerPool)}; the schedule's fan-out invocation sends ${Math.ceil(C / MAX_ENTRIES_PER_CALL)} PutEvents calls of up to ${MAX_ENTRIES_PER_CALL} requests (one per cluster) a run`,
      change: "probe a cluster's pools a few at a time within its invocation (they are independent reads and writes)",
    },
    null,
  );

  // 2. The probe's fleet pass: the requests go through reservedConcurrency slots. A pass longer than the
  // schedule falls behind (each tick adds more than a pass drains) until Lambda drops requests that waited
  // past maximumEventAge.
  const probeSlots = fn.probe.reservedConcurrency ?? QUOTAS.lambdaConcurrentExecutions.value;
  const probePassBound = Math.min(s.probeEverySeconds, fn.probe.maximumEventAgeSeconds);
  add(
    {
      id: 'probe-fan-out',
      what: "every cluster's probe request runs before the next scheduled probe",
      limit: {
        value: probePassBound,
        unit: 's for a fleet probe',
        source: `the probe's schedule (serverless.yml rate(${s.probeEverySeconds / 60} minutes)), within functions.probe.maximumEventAge (${fn.probe.maximumEventAgeSeconds} s)`,
      },
      atFleet: Math.ceil(C / probeSlots) * clusterProbeS,
      how: `${probeSlots} clusters probed at a time (reserved concurrency), ${Math.round(probeMsPerCluster)} ms a cluster + ${M} pools × ${round1(probeMsPerPool)} ms each (measured); the other requests wait in Lambda's queue for a slot`,
      change:
        "raise the probe's reserved concurrency (each probe reads its own cluster's apiserver and writes its own cluster's partition), or probe less often",
    },
    (probePassBound * probeSlots) / Math.max(1e-9, clusterProbeS),
  );

  // 3. A rollout's transition that changes every cluster (its start, a fleet-wide rollback) writes every
  // cluster's progress item on the rollout's one partition; the state item does not grow with the fleet.
  const progressWriteUnits = Math.max(1, Math.ceil(sizes.rolloutProgressItemBytes / 1024));
  // Each change is written twice: the candidate, then (after the state item commits) its finalisation.
  const unitsPerChangedCluster = 2 * progressWriteUnits;
  const partitionWrites = QUOTAS.dynamoPartitionWriteUnitsPerSecond.value;
  const tickReadUnits = Math.ceil((C * sizes.rolloutProgressItemBytes) / 4096);
  add(
    {
      id: 'rollout-fleet-transition',
      what: "a rollout transition that changes every cluster (its start, a fleet-wide rollback) is written within the rollout function's timeout",
      limit: {
        value: fn.rollout.timeoutSeconds,
        unit: 's per transition',
        source: `serverless.yml functions.rollout.timeout; one partition takes ${partitionWrites} write units/s (${QUOTAS.dynamoPartitionWriteUnitsPerSecond.source})`,
      },
      atFleet: (C * unitsPerChangedCluster) / partitionWrites,
      how: `one progress item per cluster (${sizes.rolloutProgressItemBytes} bytes for a finished cluster, measured; more while its unhealthy pools are listed), ${unitsPerChangedCluster} write units per changed cluster (written as a candidate, then finalised) on the rollout's partition at ${partitionWrites}/s; a tick writes only the clusters that changed, and the state item stays under 1 KB whatever the fleet. Every tick reads all the items with one Query: ${tickReadUnits} read units`,
      change:
        "spread a rollout's progress items over several partitions (ROLLOUT#id#n by a hash of the cluster id), or let a fleet-wide transition write its clusters over several invocations",
    },
    (fn.rollout.timeoutSeconds * partitionWrites) / unitsPerChangedCluster,
  );

  // 4. Reconcile throughput: reserved concurrency ÷ duration; a wave's backlog must drain within maximumEventAge.
  const reconcileS = per(p.rolloutPerPool.billedMs.reconcile, p.rolloutPerPool.invocations.reconcile) / 1000;
  const reconcilesPerPool = p.rolloutPerPool.invocations.reconcile ?? 0;
  const concurrency = fn.reconcile.reservedConcurrency ?? QUOTAS.lambdaConcurrentExecutions.value;
  const waveBacklogS = (s.rolloutWaveFraction * C * M * reconcilesPerPool * reconcileS) / concurrency;
  add(
    {
      id: 'reconcile-backlog',
      what: "a rollout wave's reconciles start before Lambda drops them (maximumEventAge)",
      limit: {
        value: fn.reconcile.maximumEventAgeSeconds,
        unit: 's of queued reconciles',
        source:
          "serverless.yml functions.reconcile.maximumEventAge; throttled asynchronous events wait in Lambda's queue up to it",
      },
      atFleet: waveBacklogS,
      how: `${reconcilesPerPool} reconciles per pool in a rollout × ${reconcileS.toFixed(2)} s each (measured) through ${concurrency} reserved concurrency = ${(concurrency / reconcileS).toFixed(1)} reconciles/s; a wave is ${s.rolloutWaveFraction * 100}% of the pools; a whole rollout takes ${((C * M * reconcilesPerPool * reconcileS) / concurrency / 60).toFixed(0)} min of reconcile time`,
      change:
        'bound concurrency per cluster (what protects an apiserver) instead of fleet-wide: e.g. raise reservedConcurrency and keep the per-cluster lease; or smaller waves',
    },
    (fn.reconcile.maximumEventAgeSeconds * concurrency) / (s.rolloutWaveFraction * M * reconcilesPerPool * reconcileS),
  );

  // 5. The audit: one request per cluster through reservedConcurrency slots; each must start within its event age.
  const auditMsPerPool = p.audit.perPool.billedMs.audit ?? 0;
  const auditMsPerCluster = p.audit.perCluster.billedMs.audit ?? 0;
  const clusterAuditS = (auditMsPerCluster + M * auditMsPerPool) / 1000;
  const auditSlots = fn.audit.reservedConcurrency ?? QUOTAS.lambdaConcurrentExecutions.value;
  const auditRunS = Math.ceil(C / auditSlots) * clusterAuditS;
  add(
    {
      id: 'audit-fan-out',
      what: "every cluster's audit request runs before it expires (and before the next scheduled run)",
      limit: {
        value: fn.audit.maximumEventAgeSeconds,
        unit: 's for a fleet audit',
        source: 'serverless.yml functions.audit.maximumEventAge (= the 10-minute schedule)',
      },
      atFleet: auditRunS,
      how: `${auditSlots} audits at a time, ${Math.round(auditMsPerCluster)} ms a cluster and ${round1(auditMsPerPool)} ms per pool (measured); one cluster's audit must also fit its own ${fn.audit.timeoutSeconds} s timeout: ${poolsInTimeout(fn.audit.timeoutSeconds, auditMsPerCluster, auditMsPerPool)}`,
      change:
        "raise the audit's reserved concurrency, or audit less often than every 10 minutes (the schedule and the event age move together)",
    },
    (fn.audit.maximumEventAgeSeconds * auditSlots) / Math.max(1e-9, clusterAuditS),
  );

  // 6. PutEvents: a fleet-wide change (every pool at once: a region's nodes flapping, a change to every pool)
  // sends each pool's notices within burstSeconds; the forwarder sends due keys as they come due, so calls
  // follow the notice rate (divided by the entries a call carries), not the coalescing window.
  const noticesPerPool = p.rolloutPerPool.billedEvents;
  const callsPerPool = noticesPerPool / Math.max(1e-9, sizes.putEventsEntriesPerCall);
  add(
    {
      id: 'put-events-rate',
      what: "a fleet-wide change's PutEvents calls stay under the account's PutEvents rate",
      limit: {
        value: QUOTAS.putEventsPerSecond.value,
        unit: QUOTAS.putEventsPerSecond.unit,
        source: QUOTAS.putEventsPerSecond.source,
      },
      atFleet: (C * M * callsPerPool) / s.burstSeconds,
      how: `every pool changing within ${s.burstSeconds} s, ${noticesPerPool} notices per pool (a rollout's, measured) at ${sizes.putEventsEntriesPerCall} entries per call (measured); over the quota the forwarders resend the throttled entries`,
      change:
        'fuller batches under load (up to 10 entries a call: the forwarder sends what is due, so a longer window when busy fills them), or a bus per region',
    },
    (QUOTAS.putEventsPerSecond.value * s.burstSeconds) / (M * callsPerPool),
  );

  // 7. EventBridge invocations: every accepted change notice matches the reconcile rule once.
  add(
    {
      id: 'eventbridge-invocations',
      what: "a fleet-wide change's rule matches stay under the account's invocations rate",
      limit: {
        value: QUOTAS.eventBridgeInvocationsPerSecond.value,
        unit: QUOTAS.eventBridgeInvocationsPerSecond.unit,
        source: QUOTAS.eventBridgeInvocationsPerSecond.source,
      },
      atFleet: (C * M * noticesPerPool) / s.burstSeconds,
      how: `one invocation per notice, the same burst; past the quota deliveries are delayed, not dropped`,
      change: 'as for PutEvents; one rule per notice type keeps it at one match per notice',
    },
    (QUOTAS.eventBridgeInvocationsPerSecond.value * s.burstSeconds) / (M * Math.max(1e-9, noticesPerPool)),
  );

  // 8. DynamoDB: the hottest partition is one cluster's (its pools, probes and audits share CLUSTER#<id>).
  const reconcileWriteUnits = per(p.rolloutPerPool.writeUnits, p.rolloutPerPool.invocations.reconcile);
  const fleetWriteRate = (concurrency / Math.max(1e-9, reconcileS)) * reconcileWriteUnits;
  add(
    {
      id: 'dynamodb-cluster-partition',
      what: "writes to one cluster's partition stay under a partition's write throughput",
      limit: {
        value: QUOTAS.dynamoPartitionWriteUnitsPerSecond.value,
        unit: QUOTAS.dynamoPartitionWriteUnitsPerSecond.unit,
        source: QUOTAS.dynamoPartitionWriteUnitsPerSecond.source,
      },
      atFleet: fleetWriteRate,
      how: `even if every running reconcile wrote to one cluster: ${concurrency} at a time × ${reconcileWriteUnits.toFixed(1)} write units per ${reconcileS.toFixed(2)} s; the reserved concurrency caps it, independent of fleet size. A probe writes 2 units per pool, one pool at a time`,
      change: `reached only with ${Math.round((QUOTAS.dynamoPartitionWriteUnitsPerSecond.value * reconcileS) / Math.max(1e-9, reconcileWriteUnits))} concurrent reconciles on one cluster; then shard the pool items by pool (POOL#<cluster>#<pool>) and list them with a GSI`,
    },
    null,
  );

  // 9. Lambda concurrency: the reserved concurrencies are fixed, so fleet size does not move them.
  const reserved = Object.values(fn).reduce((n, f) => n + (f.reservedConcurrency ?? 0), 0);
  add(
    {
      id: 'lambda-concurrency',
      what: "the functions' reserved concurrency fits the account's",
      limit: {
        value: QUOTAS.lambdaConcurrentExecutions.value - 100,
        unit: 'reservable concurrent executions (100 stay unreserved)',
        source: QUOTAS.lambdaConcurrentExecutions.source,
      },
      atFleet: reserved,
      how: `${reserved} reserved in all; fleet size changes waiting time, not concurrency. The scaling rate (${QUOTAS.lambdaScalingRate.value} per 10 s per function) only matters above 1,000`,
      change: 'shared with every other function in the account: a separate account for the reconciler',
    },
    null,
  );

  // 10. Cross-account PutEvents: the central bus's resource policy grows per account granted.
  const accounts = input.accounts ?? 1;
  add(
    {
      id: 'bus-policy-size',
      what: "the central bus's resource policy names every sending account",
      limit: {
        value: QUOTAS.eventBusPolicyCharacters.value,
        unit: QUOTAS.eventBusPolicyCharacters.unit,
        source: QUOTAS.eventBusPolicyCharacters.source,
      },
      atFleet: accounts * s.busPolicyCharactersPerAccount,
      how: `about ${s.busPolicyCharactersPerAccount} characters per account statement: about ${Math.floor(QUOTAS.eventBusPolicyCharacters.value / s.busPolicyCharactersPerAccount)} accounts`,
      change:
        'one statement with an aws:PrincipalOrgID condition (any account of the organization) instead of one per account',
    },
    null,
  );

  return limits.sort((a, b) => (a.reachedAtPools ?? Infinity) - (b.reachedAtPools ?? Infinity));
}
