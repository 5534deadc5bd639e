/**
 * When an observation may still be reported, and when it must be withdrawn. Pure.
 *
 * The agent never re-reports an old observation as fresh: every report carries observedTime, the moment
 * the source (Lease, etcd) was actually read, and while the source cannot be read nothing new is written.
 * Once the last good read is older than the staleness bound the agent withdraws the observed values
 * (holder/renewTime/transitions, or healthy/sizes/alarms) and keeps observedTime at the last good read:
 * absent values + an old observedTime mean "unknown", never "fine as before".
 */
export interface Freshness {
  /** Time of the last successful read; at start, the agent's start (values in the status then are a previous run's). */
  lastGoodAt: number;
  /** Whether the withdrawal was already written since the last good read. */
  withdrawn: boolean;
}

export function freshAt(now: number): Freshness {
  return { lastGoodAt: now, withdrawn: false };
}

/** True when the values must be withdrawn now (once per outage). */
export function shouldWithdraw(f: Freshness, now: number, staleAfterMs: number): boolean {
  return !f.withdrawn && now - f.lastGoodAt > staleAfterMs;
}
