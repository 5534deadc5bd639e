/**
 * The billable counts the cost model multiplies by prices. Each figure is what one unit of work (one new
 * pool, one pool for a day at rest, one audit run, …) consumed, measured on the local fleet by
 * `npm run bench -- cost` (dev/local/bus/usage.ts, dev/local/table-usage.ts, dev/local/lambda-runtime.ts).
 */
export const FUNCTIONS = ['reconcile', 'audit', 'rollout', 'probe', 'cloudEvents'] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

export interface Counts {
  /** Lambda invocations (requests), per function. */
  invocations: Partial<Record<FunctionName, number>>;
  /** Billed duration in ms (each invocation rounded up to 1 ms), per function. */
  billedMs: Partial<Record<FunctionName, number>>;
  /** PutEvents entries as billed: one per started 64 KB of each entry. Schedules are AWS events: free. */
  billedEvents: number;
  /** Events matched to a rule target (EventBridge invocations quota, not billed on the same account). */
  ruleMatches: number;
  /** DynamoDB on-demand read and write request units. */
  readUnits: number;
  writeUnits: number;
  /** SQS messages (dead letters). */
  sqsMessages: number;
  /** Bytes written to CloudWatch Logs: the functions' JSON logs and EMF metrics, and Lambda's START/END/REPORT lines. */
  logBytes: number;
}

export const zeroCounts = (): Counts => ({
  invocations: {},
  billedMs: {},
  billedEvents: 0,
  ruleMatches: 0,
  readUnits: 0,
  writeUnits: 0,
  sqsMessages: 0,
  logBytes: 0,
});

function mapRecord(
  a: Partial<Record<FunctionName, number>>,
  f: (v: number) => number,
): Partial<Record<FunctionName, number>> {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, f(v ?? 0)]));
}

export function scaleCounts(c: Counts, k: number): Counts {
  return {
    invocations: mapRecord(c.invocations, (v) => v * k),
    billedMs: mapRecord(c.billedMs, (v) => v * k),
    billedEvents: c.billedEvents * k,
    ruleMatches: c.ruleMatches * k,
    readUnits: c.readUnits * k,
    writeUnits: c.writeUnits * k,
    sqsMessages: c.sqsMessages * k,
    logBytes: c.logBytes * k,
  };
}

export function addCounts(...all: Counts[]): Counts {
  const out = zeroCounts();
  for (const c of all) {
    for (const fn of FUNCTIONS) {
      if (c.invocations[fn] !== undefined) out.invocations[fn] = (out.invocations[fn] ?? 0) + (c.invocations[fn] ?? 0);
      if (c.billedMs[fn] !== undefined) out.billedMs[fn] = (out.billedMs[fn] ?? 0) + (c.billedMs[fn] ?? 0);
    }
    out.billedEvents += c.billedEvents;
    out.ruleMatches += c.ruleMatches;
    out.readUnits += c.readUnits;
    out.writeUnits += c.writeUnits;
    out.sqsMessages += c.sqsMessages;
    out.logBytes += c.logBytes;
  }
  return out;
}

export const totalInvocations = (c: Counts) => Object.values(c.invocations).reduce((n: number, v) => n + (v ?? 0), 0);

/**
 * What the system consumes, per unit of work. Audits and probes are split into what a run costs once
 * (the schedule's fan-out invocation), per cluster (one invocation, one event) and per pool (duration,
 * table units, log bytes grow with the pools a cluster has).
 */
export interface UsageProfile {
  /** Where these figures come from (bench command, fleet shape, date). */
  measuredBy: string;
  /** memorySize of each function (serverless.yml). */
  memoryMb: Record<FunctionName, number>;
  /** One new pool from NodePool created to Available. */
  newPool: Counts;
  /** One converged pool for a day with nothing changing. */
  poolDay: Counts;
  /** One scheduled rollout tick with no rollout running (rate(1 minute)). */
  idleRolloutTick: Counts;
  audit: { perRun: Counts; perCluster: Counts; perPool: Counts };
  probe: { perRun: Counts; perCluster: Counts; perPool: Counts };
  /** One rollout, per pool it updates (ticks, reconciles, status writes). */
  rolloutPerPool: Counts;
  /** CloudWatch custom metric series the functions emit: fixed ones and ones per cluster (a clusterId dimension). */
  metricSeries: { fixed: number; perCluster: number };
  /** Figures the scale model needs besides the counts (core/cost/scale.ts). */
  sizes?: {
    /**
     * One cluster's rollout progress item (ROLLOUT#id / PROGRESS#c) once the cluster finished: no pool is
     * listed (only unhealthy pools are), its entry finalised.
     */
    rolloutProgressItemBytes: number;
    /** PutEvents entries per call the forwarders achieved. */
    putEventsEntriesPerCall: number;
  };
}
