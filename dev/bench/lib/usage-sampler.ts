/**
 * Reads every billable counter of a running local fleet at once — the bus (PutEvents chunks, matches,
 * dead letters), the table (request units), each function (invocations, billed ms, platform log lines) and
 * the functions' own log bytes — and turns the difference between two readings into cost-model Counts.
 */

import { type Counts, FUNCTIONS, type FunctionName } from '../../../core/cost/counts.ts';
import type { LocalFleet } from '../../local/fleet/fleet.ts';
import type { LogMeter } from './log-meter.ts';

export interface Reading {
  bus: ReturnType<LocalFleet['bus']['usage']>;
  table: ReturnType<LocalFleet['dynamo']['usage']>;
  fns: Record<FunctionName, { invocations: number; billedMs: number; platformLogBytes: number; queuedMs: number }>;
  functionLogBytes: number;
  apiWrites: number;
}

export function functionsOf(fleet: LocalFleet): Record<FunctionName, LocalFleet['reconcile']> {
  return {
    reconcile: fleet.reconcile,
    audit: fleet.audit,
    rollout: fleet.rollout,
    probe: fleet.probe,
    cloudEvents: fleet.cloudEvents,
  };
}

export async function read(fleet: LocalFleet, logs: LogMeter, apiWrites: () => Promise<number>): Promise<Reading> {
  const fns = functionsOf(fleet);
  return {
    bus: fleet.bus.usage(),
    table: fleet.dynamo.usage(),
    fns: Object.fromEntries(
      FUNCTIONS.map((f) => [
        f,
        {
          invocations: fns[f].stats.invocations,
          billedMs: fns[f].stats.billedMs,
          platformLogBytes: fns[f].stats.platformLogBytes,
          queuedMs: fns[f].stats.queuedMs,
        },
      ]),
    ) as Reading['fns'],
    functionLogBytes: logs.totalBytes(),
    apiWrites: await apiWrites(),
  };
}

/** What happened between two readings, as cost-model counts. */
export function between(a: Reading, b: Reading): Counts & { apiWrites: number; queuedMs: number } {
  const invocations: Counts['invocations'] = {};
  const billedMs: Counts['billedMs'] = {};
  let platformLogBytes = 0;
  let queuedMs = 0;
  for (const f of FUNCTIONS) {
    const n = b.fns[f].invocations - a.fns[f].invocations;
    if (n) invocations[f] = n;
    const ms = b.fns[f].billedMs - a.fns[f].billedMs;
    if (ms) billedMs[f] = ms;
    platformLogBytes += b.fns[f].platformLogBytes - a.fns[f].platformLogBytes;
    queuedMs += b.fns[f].queuedMs - a.fns[f].queuedMs;
  }
  const matches = (u: Reading['bus']) => Object.values(u.matchesByTarget).reduce((n, v) => n + v, 0);
  return {
    invocations,
    billedMs,
    billedEvents: b.bus.billedEvents - a.bus.billedEvents,
    ruleMatches: matches(b.bus) - matches(a.bus),
    readUnits: b.table.readRequestUnits - a.table.readRequestUnits,
    writeUnits: b.table.writeRequestUnits - a.table.writeRequestUnits,
    sqsMessages: b.bus.sqsMessages - a.bus.sqsMessages,
    logBytes: platformLogBytes + b.functionLogBytes - a.functionLogBytes,
    apiWrites: b.apiWrites - a.apiWrites,
    queuedMs,
  };
}

/** Schedule firings between two readings, per target (the bus's own timers run on the wall clock). */
export function scheduledBetween(a: Reading, b: Reading): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [t, n] of Object.entries(b.bus.scheduledByTarget)) {
    const d = n - (a.bus.scheduledByTarget[t] ?? 0);
    if (d) out[t] = d;
  }
  return out;
}
