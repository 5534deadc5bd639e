/**
 * Leader: read the YurtHub leader Lease on the own apiserver and offer the report; withdraw it once the
 * Lease could not be read for longer than the staleness bound (decide/staleness.ts).
 */

import type { OwnApiserver } from '../adapters/own-apiserver.ts';
import { type LeaderStatus, leaderChangedMeaningfully, leaderFromLease } from '../decide/leader.ts';
import { ReportSection } from '../decide/report.ts';
import { type Freshness, freshAt, shouldWithdraw } from '../decide/staleness.ts';
import type { Logger } from '../log.ts';
import type { AgentStats } from '../stats.ts';

export function leaderSection(): ReportSection<LeaderStatus> {
  return new ReportSection<LeaderStatus>({
    clearable: ['holder', 'renewTime', 'transitions'],
    meaningful: leaderChangedMeaningfully,
  });
}

export interface LeaderStepDeps {
  own: OwnApiserver;
  lease: { namespace: string; name: string };
  section: ReportSection<LeaderStatus>;
  stats: AgentStats;
  log: Logger;
  now: () => Date;
  reportIntervalMs: number;
  staleAfterMs: number;
}

export class LeaderStep {
  private readonly d: LeaderStepDeps;
  private freshness: Freshness;
  private lastObservedTime: string | undefined;

  constructor(deps: LeaderStepDeps) {
    this.d = deps;
    this.freshness = freshAt(deps.now().getTime());
  }

  async run(): Promise<void> {
    const { own, lease, section, stats, log } = this.d;
    let report: LeaderStatus;
    try {
      const read = await own.readLease(lease.namespace, lease.name);
      // observedTime is when the answer came back, so a slow read never dates the report earlier than it is.
      report = leaderFromLease(read, this.d.now());
    } catch (err) {
      this.withdrawIfStale();
      throw err;
    }
    if (stats.leader.reads === 0 || stats.leader.holder !== report.holder)
      log.info('leader', { holder: report.holder ?? null, transitions: report.transitions ?? null });
    const now = this.d.now().getTime();
    this.freshness = freshAt(now);
    this.lastObservedTime = report.observedTime;
    stats.leader.reads++;
    stats.leader.holder = report.holder;
    section.offer(report, now, this.d.reportIntervalMs);
  }

  private withdrawIfStale(): void {
    if (!shouldWithdraw(this.freshness, this.d.now().getTime(), this.d.staleAfterMs)) return;
    this.freshness = { ...this.freshness, withdrawn: true };
    this.d.stats.leader.withdrawn++;
    this.d.stats.leader.holder = undefined;
    this.d.log.warn('leader Lease unreadable for longer than the staleness bound; withdrawing the leader report', {
      lastObservedTime: this.lastObservedTime ?? null,
    });
    this.d.section.force(this.lastObservedTime ? { observedTime: this.lastObservedTime } : {});
  }
}
