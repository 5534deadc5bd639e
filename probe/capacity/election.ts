/**
 * Leader election the way YurtHub runs it: N contenders (identity node-<i>) with client-go's loops over one
 * Lease through the API — acquire: tryAcquireOrRenew, then wait retryPeriod × (1 + rand × 1.2); lead: every
 * retryPeriod a renew round that must succeed within renewDeadline of its start, else the leader steps down.
 * Each decision is core/leader's `nextLeaseAction`; each write carries the resourceVersion read.
 *
 * The leader is killed repeatedly, alternating a crash (the process stops: it leads no more from that
 * instant) and a hang (its requests stop going out; its renew round times out and it steps down at the
 * deadline, then recovers and competes again). Leadership is tracked by each contender's own belief — from
 * the write that made it holder until it crashed or stepped down — so two overlapping intervals are two
 * nodes acting as leader at once. Zero overlaps can still be luck, so the margin is reported too: for each
 * leader, the time from its end of belief to the expiry of the Lease it last renewed — the window in which
 * nobody else could yet take over. By design it is leaseDuration − renewDeadline − retryPeriod for a hang
 * right after a renew; request latency and timer lateness eat into it (measured on raw etcd with client-go
 * Lease semantics: 82 ms left at N = 1000 and ×0.1 durations).
 */

import type { LeaderElectionConfig, Lease } from '../../core/leader/index.ts';
import { ACQUIRE_JITTER_FACTOR, nextLeaseAction } from '../../core/leader/index.ts';
import { median } from '../../shared/stats.ts';
import type { KubeHttp } from './kube-http.ts';
import { unexpected } from './kube-http.ts';
import { type LatencySummary, summarize } from './load.ts';

export interface ElectionOptions {
  contenders: number;
  /** Durations as run (already divided by the time scale). */
  config: LeaderElectionConfig;
  timeScale: number;
  kills: number;
  lease: { namespace: string; name: string };
  log?: (line: string) => void;
}

export interface KillRecord {
  kind: 'crash' | 'hang';
  leader: string;
  newLeader: string | null;
  /** Kill → the next leader's first successful write (null: none within the wait). */
  failoverMs: number | null;
  /** The old leader's end of belief → the next leader's start (negative = overlap). */
  gapMs: number | null;
}

export interface ElectionResult {
  contenders: number;
  timeScale: number;
  lease: string;
  /** Durations as run, in seconds. */
  config: LeaderElectionConfig;
  firstLeader: string | null;
  firstLeaderMs: number | null;
  kills: KillRecord[];
  failoverMs: { p50: number | null; max: number | null; unscaledP50: number | null; unscaledMax: number | null };
  requests: number;
  requestsPerSecond: number;
  /** At the durations the pool really runs with (requests scale inversely with the time scale). */
  unscaledRequestsPerSecond: number;
  requestLatencyMs: { read: LatencySummary; write: LatencySummary };
  slowestRenewMs: number | null;
  acquisitions: number;
  /** Failed requests (not counting attempts given up at a deadline), with the first few messages. */
  errors: number;
  errorSamples: string[];
  leaseTransitions: number | null;
  overlaps: number;
  /** Smallest time between one leader's end and the next one's start (includes the taker's poll delay). */
  smallestGapMs: number | null;
  /**
   * Smallest time between a leader's end of belief and the expiry of the Lease it last renewed: how close
   * a takeover came to overlapping it (negative = another node could have led while it still believed).
   */
  smallestMarginMs: number | null;
  /** The margin's design value: leaseDuration − renewDeadline − retryPeriod (a hang just after a renew). */
  theoreticalMarginMs: number;
  targets: {
    firstLeaderWithinRetryPeriod: boolean;
    failoverWithinLeasePlusTwoRetries: boolean;
    zeroOverlaps: boolean;
    boundMs: { firstLeader: number; failover: number };
  };
}

interface Interval {
  id: string;
  start: number;
  end: number | null;
  /** When the Lease as this leader last renewed it stops protecting it (renewTime + lease duration). */
  expiresAt: number;
  /** How the belief ended: crash, step-down (renew deadline missed or another holder seen), or the run's end. */
  endedBy: 'crash' | 'step-down' | 'stop' | null;
}

class Aborted extends Error {}

/** Shared bookkeeping: leadership intervals, request figures, listeners waiting for a new leader. */
class Ledger {
  intervals: Interval[] = [];
  reads: number[] = [];
  writes: number[] = [];
  renewRounds: number[] = [];
  requests = 0;
  acquisitions = 0;
  errors: string[] = [];
  private waiters = new Set<(i: Interval) => void>();

  lead(id: string, at: number, expiresAt: number): Interval {
    const interval: Interval = { id, start: at, end: null, expiresAt, endedBy: null };
    this.intervals.push(interval);
    this.acquisitions++;
    for (const w of [...this.waiters]) w(interval);
    return interval;
  }

  /**
   * A failed attempt is retried, as in client-go: given up at its deadline, or a request that failed
   * (reset, 5xx, 403). The latter are kept for the report, so a probe that cannot write says why.
   */
  failed(err: unknown): false {
    const e = err as Error;
    const abort = e instanceof Aborted || e?.name === 'AbortError' || e?.name === 'TimeoutError';
    if (!abort && this.errors.length < 1000) this.errors.push(e?.message ?? String(err));
    return false;
  }

  /** Resolves with the next interval that starts (by anyone but `except`), or null after `timeoutMs`. */
  nextLeader(except: string | null, timeoutMs: number): Promise<Interval | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(null);
      }, timeoutMs);
      const waiter = (i: Interval) => {
        if (i.id === except) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(i);
      };
      this.waiters.add(waiter);
    });
  }
}

class Contender {
  readonly id: string;
  private readonly api: KubeHttp;
  private readonly o: ElectionOptions;
  private readonly ledger: Ledger;
  private readonly path: string;
  private readonly stopped = new AbortController();
  private hungUntil = 0;
  current: Interval | null = null;
  lastRenewAt = 0;
  crashed = false;

  constructor(id: string, api: KubeHttp, o: ElectionOptions, ledger: Ledger) {
    this.id = id;
    this.api = api;
    this.o = o;
    this.ledger = ledger;
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${o.lease.namespace}/leases/${o.lease.name}`;
  }

  get leading(): boolean {
    return this.current !== null;
  }

  async run(): Promise<void> {
    const c = this.o.config;
    try {
      while (!this.stopped.signal.aborted) {
        // Acquire: try, then wait a jittered retry period (client-go's JitterUntil, sliding).
        while (!(await this.attempt(null).catch((err) => this.ledger.failed(err)))) {
          await this.sleep(c.retryPeriodSeconds * 1000 * (1 + Math.random() * ACQUIRE_JITTER_FACTOR));
        }
        // Lead: a renew round every retry period, each with its own renew deadline.
        for (;;) {
          await this.sleep(c.retryPeriodSeconds * 1000);
          const deadline = Date.now() + c.renewDeadlineSeconds * 1000;
          if (!(await this.renewRound(deadline))) break;
        }
        this.stepDown(Date.now());
      }
    } catch (err) {
      if (!(err instanceof Aborted)) throw err;
    }
  }

  /** client-go's renew: poll every retry period until a renew succeeds or the deadline passes. */
  private async renewRound(deadline: number): Promise<boolean> {
    const started = Date.now();
    while (Date.now() < deadline) {
      const ok = await this.attempt(deadline).catch((err) => this.ledger.failed(err));
      if (this.stopped.signal.aborted) throw new Aborted();
      if (ok) {
        this.ledger.renewRounds.push(Date.now() - started);
        return true;
      }
      const wait = Math.min(this.o.config.retryPeriodSeconds * 1000, deadline - Date.now());
      if (wait > 0) await this.sleep(wait);
    }
    return false;
  }

  /** One tryAcquireOrRenew, abandoned at `deadline` (client-go's context timeout). */
  private async attempt(deadline: number | null): Promise<boolean> {
    const signal =
      deadline === null
        ? this.stopped.signal
        : AbortSignal.any([this.stopped.signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]);
    await this.waitWhileHung(signal);
    const t0 = Date.now();
    this.ledger.requests++;
    const got = await this.api.request<Lease>('GET', this.path, undefined, signal);
    this.ledger.reads.push(Date.now() - t0);
    if (got.status !== 200 && got.status !== 404) throw unexpected(`GET lease`, got);
    const now = new Date();
    const action = nextLeaseAction(
      got.status === 404 ? undefined : got.body,
      this.id,
      now,
      this.o.config,
      this.o.lease,
    );
    if (action.kind === 'wait') {
      // Someone else holds it. A leader that sees another holder has lost it (client-go's IsLeader).
      if (this.current) this.stepDown(Date.now());
      return false;
    }
    await this.waitWhileHung(signal);
    const w0 = Date.now();
    this.ledger.requests++;
    const res =
      action.kind === 'create'
        ? await this.api.request('POST', this.path.replace(/\/[^/]+$/, ''), action.lease, signal)
        : await this.api.request('PUT', this.path, action.lease, signal);
    this.ledger.writes.push(Date.now() - w0);
    if (res.status === 409) return false;
    if (res.status !== 200 && res.status !== 201) throw unexpected(`${action.kind} lease`, res);
    if (signal.aborted) return false; // the answer came after we gave up: client-go ignores it too
    const at = Date.now();
    this.lastRenewAt = at;
    const expiresAt = now.getTime() + this.o.config.leaseDurationSeconds * 1000;
    if (!this.current) this.current = this.ledger.lead(this.id, at, expiresAt);
    else this.current.expiresAt = expiresAt;
    return true;
  }

  private stepDown(at: number, how: Interval['endedBy'] = 'step-down'): void {
    if (this.current) {
      this.current.end = at;
      this.current.endedBy = how;
      this.current = null;
    }
  }

  crash(): void {
    this.crashed = true;
    this.stepDown(Date.now(), 'crash');
    this.stopped.abort();
  }

  /** Requests stop going out for `ms`; the renew round times out meanwhile and the leader steps down. */
  hang(ms: number): void {
    this.hungUntil = Date.now() + ms;
  }

  stop(at: number): void {
    this.stepDown(at, 'stop');
    this.stopped.abort();
  }

  private async waitWhileHung(signal: AbortSignal): Promise<void> {
    const left = this.hungUntil - Date.now();
    if (left <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, left);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new Aborted());
        },
        { once: true },
      );
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopped.signal.aborted) return reject(new Aborted());
      const timer = setTimeout(resolve, ms);
      this.stopped.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new Aborted());
        },
        { once: true },
      );
    });
  }
}

export async function runElection(api: KubeHttp, o: ElectionOptions): Promise<ElectionResult> {
  const c = o.config;
  const log = o.log ?? (() => undefined);
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${o.lease.namespace}/leases/${o.lease.name}`;
  // A fresh election: no holder from an earlier run.
  const cleared = await api.request('DELETE', leasePath);
  if (cleared.status !== 200 && cleared.status !== 404) throw unexpected('delete the probe lease', cleared);

  const ledger = new Ledger();
  const contenders = Array.from({ length: o.contenders }, (_, i) => new Contender(`node-${i}`, api, o, ledger));
  const t0 = Date.now();
  const firstLeaderWait = ledger.nextLeader(null, Math.max(30_000, c.leaseDurationSeconds * 4000));
  const running = contenders.map((k) => k.run());
  const first = await firstLeaderWait;
  const firstLeaderMs = first ? first.start - t0 : null;
  log(`election: first leader ${first?.id ?? 'none'} after ${firstLeaderMs ?? '∞'} ms`);

  const kills: KillRecord[] = [];
  for (let k = 0; first && k < o.kills; k++) {
    const leader = contenders.find((x) => x.leading && !x.crashed);
    if (!leader?.current) {
      const next = await ledger.nextLeader(null, c.leaseDurationSeconds * 3000);
      if (!next) break;
      k--;
      continue;
    }
    // Kill at a random phase of its renew cycle, after at least one renewal as leader.
    const since = leader.current.start;
    while (leader.leading && leader.lastRenewAt <= since) await delay(c.retryPeriodSeconds * 250);
    await delay(Math.random() * c.retryPeriodSeconds * 1000);
    const old = leader.current;
    if (old === null) {
      k--;
      continue;
    }
    const kind = k % 2 === 0 ? 'crash' : 'hang';
    const next = ledger.nextLeader(leader.id, (c.leaseDurationSeconds + 4 * c.retryPeriodSeconds) * 3000);
    const killAt = Date.now();
    if (kind === 'crash') leader.crash();
    else leader.hang((c.renewDeadlineSeconds + c.leaseDurationSeconds) * 1000);
    const taken = await next;
    const record: KillRecord = {
      kind,
      leader: leader.id,
      newLeader: taken?.id ?? null,
      failoverMs: taken ? taken.start - killAt : null,
      gapMs: taken && old.end !== null ? taken.start - old.end : null,
    };
    kills.push(record);
    log(
      `election: ${kind} of ${record.leader} → ${record.newLeader ?? 'no leader'} after ${record.failoverMs ?? '∞'} ms (gap ${record.gapMs ?? '?'} ms)`,
    );
  }

  const endAt = Date.now();
  for (const k of contenders) k.stop(endAt);
  await Promise.all(running);
  const seconds = (endAt - t0) / 1000;

  const finalLease = await api.request<Lease>('GET', leasePath);
  const { overlaps, smallestGapMs, smallestMarginMs } = overlapFigures(ledger.intervals, endAt);
  const failovers = kills.map((k) => k.failoverMs).filter((m): m is number => m !== null);
  const p50 = failovers.length ? Math.round(median(failovers)) : null;
  const max = failovers.length ? Math.max(...failovers) : null;
  const bound = {
    firstLeader: c.retryPeriodSeconds * 1000,
    failover: (c.leaseDurationSeconds + 2 * c.retryPeriodSeconds) * 1000,
  };
  const rps = ledger.requests / seconds;
  return {
    contenders: o.contenders,
    timeScale: o.timeScale,
    lease: `${o.lease.namespace}/${o.lease.name}`,
    config: c,
    firstLeader: first?.id ?? null,
    firstLeaderMs,
    kills,
    failoverMs: {
      p50,
      max,
      unscaledP50: p50 === null ? null : Math.round(p50 * o.timeScale),
      unscaledMax: max === null ? null : Math.round(max * o.timeScale),
    },
    requests: ledger.requests,
    requestsPerSecond: Math.round(rps * 10) / 10,
    unscaledRequestsPerSecond: Math.round((rps / o.timeScale) * 10) / 10,
    requestLatencyMs: { read: summarize(ledger.reads), write: summarize(ledger.writes) },
    slowestRenewMs: ledger.renewRounds.length ? Math.max(...ledger.renewRounds) : null,
    acquisitions: ledger.acquisitions,
    errors: ledger.errors.length,
    errorSamples: [...new Set(ledger.errors)].slice(0, 3),
    leaseTransitions: finalLease.status === 200 ? (finalLease.body.spec?.leaseTransitions ?? 0) : null,
    overlaps,
    smallestGapMs,
    smallestMarginMs,
    theoreticalMarginMs: Math.round((c.leaseDurationSeconds - c.renewDeadlineSeconds - c.retryPeriodSeconds) * 1000),
    targets: {
      firstLeaderWithinRetryPeriod: firstLeaderMs !== null && firstLeaderMs <= bound.firstLeader,
      failoverWithinLeasePlusTwoRetries:
        kills.length === o.kills && failovers.length === kills.length && (max ?? Infinity) <= bound.failover,
      zeroOverlaps: overlaps === 0 && (smallestMarginMs === null || smallestMarginMs >= 0),
      boundMs: bound,
    },
  };
}

/**
 * Overlaps between leadership intervals (one starts before an earlier one ended), the smallest gap between
 * one interval's end and the next one's start, and the smallest margin between an interval's end and the
 * expiry of its last renewal (intervals cut by the end of the run do not count). Exported for the tests.
 */
export function overlapFigures(
  intervals: ReadonlyArray<Interval>,
  endAt: number,
): { overlaps: number; smallestGapMs: number | null; smallestMarginMs: number | null } {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  let overlaps = 0;
  let smallestGap: number | null = null;
  let smallestMargin: number | null = null;
  let latestEnd = -Infinity;
  for (const [i, interval] of sorted.entries()) {
    const { start } = interval;
    const end = interval.end ?? endAt;
    if (i > 0) {
      const gap = start - latestEnd;
      if (gap < 0) overlaps++;
      smallestGap = smallestGap === null ? gap : Math.min(smallestGap, gap);
    }
    if (interval.end !== null && interval.endedBy !== 'stop') {
      const margin = interval.expiresAt - end;
      smallestMargin = smallestMargin === null ? margin : Math.min(smallestMargin, margin);
    }
    latestEnd = Math.max(latestEnd, end);
  }
  return { overlaps, smallestGapMs: smallestGap, smallestMarginMs: smallestMargin };
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
