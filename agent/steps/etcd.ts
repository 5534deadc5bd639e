/**
 * etcd: read the member's sizes and alarms, do the maintenance the policy asks for (defrag, emergency
 * compaction, NOSPACE disarm), and offer the report; withdraw it once etcd could not be read for longer
 * than the staleness bound.
 */

import type { EtcdAccess } from '../adapters/etcd.ts';
import {
  type DefragPolicy,
  decideMaintenance,
  type EtcdReading,
  type EtcdStatus,
  etcdChangedMeaningfully,
  etcdReport,
  NOSPACE,
  underQuota,
} from '../decide/etcd.ts';
import { ReportSection } from '../decide/report.ts';
import { type Freshness, freshAt, shouldWithdraw } from '../decide/staleness.ts';
import { errorText, type Logger } from '../log.ts';
import type { AgentStats } from '../stats.ts';

export function etcdSection(): ReportSection<EtcdStatus> {
  return new ReportSection<EtcdStatus>({
    clearable: ['healthy', 'dbSizeBytes', 'dbSizeInUseBytes', 'alarms'],
    meaningful: etcdChangedMeaningfully,
  });
}

export interface EtcdStepDeps {
  etcd: EtcdAccess;
  quotaBytes: number | undefined;
  policy: DefragPolicy;
  section: ReportSection<EtcdStatus>;
  stats: AgentStats;
  log: Logger;
  now: () => Date;
  reportIntervalMs: number;
  staleAfterMs: number;
}

export class EtcdStep {
  private readonly d: EtcdStepDeps;
  private freshness: Freshness;
  private lastObservedTime: string | undefined;
  private lastDefragAt: number | undefined;

  constructor(deps: EtcdStepDeps) {
    this.d = deps;
    this.freshness = freshAt(deps.now().getTime());
  }

  async run(): Promise<void> {
    const { etcd, section, stats } = this.d;
    let reading: EtcdReading;
    try {
      reading = await etcd.read();
    } catch (err) {
      this.withdrawIfStale();
      throw err;
    }
    stats.etcd.reads++;
    reading = await this.maintain(reading);
    const observedAt = this.d.now();
    const report = etcdReport(reading, this.d.quotaBytes, observedAt);
    if (stats.etcd.lastDefragTime) report.lastDefragTime = stats.etcd.lastDefragTime;
    this.freshness = freshAt(observedAt.getTime());
    this.lastObservedTime = report.observedTime;
    section.offer(report, observedAt.getTime(), this.d.reportIntervalMs);
  }

  /** Runs the maintenance the reading calls for and returns the reading after it (or the old one on failure). */
  private async maintain(reading: EtcdReading): Promise<EtcdReading> {
    const { etcd, stats, log } = this.d;
    const plan = decideMaintenance(
      reading,
      this.d.policy,
      this.d.quotaBytes,
      this.lastDefragAt,
      this.d.now().getTime(),
    );
    if (plan.kind === 'none') return reading;
    try {
      if (plan.kind === 'defrag') {
        log.info('etcd maintenance', {
          action: plan.compactTo !== undefined ? 'compact+defragment' : 'defragment',
          reason: plan.reason,
          dbSizeBytes: reading.dbSizeBytes,
          dbSizeInUseBytes: reading.dbSizeInUseBytes,
        });
        if (plan.compactTo !== undefined) {
          await etcd.compact(plan.compactTo);
          stats.etcd.compactions++;
        }
        // The cooldown starts with the attempt: a defrag that keeps failing must not run on every tick.
        this.lastDefragAt = this.d.now().getTime();
        await etcd.defragment();
        stats.etcd.defrags++;
        stats.etcd.lastDefragTime = this.d.now().toISOString();
      }
      let after = await etcd.read();
      if (plan.kind === 'disarm' || (plan.disarmIfUnderQuota && after.alarms?.includes(NOSPACE))) {
        if (underQuota(after.dbSizeBytes ?? Infinity, this.d.quotaBytes)) {
          await etcd.disarmNoSpace();
          stats.etcd.alarmsDisarmed++;
          log.info('etcd NOSPACE alarm disarmed', {
            dbSizeBytes: after.dbSizeBytes,
            quotaBackendBytes: this.d.quotaBytes,
          });
          after = await etcd.read();
        } else {
          log.warn(
            'etcd NOSPACE alarm kept: the db file is still at or over the quota after compaction and defragmentation',
            {
              dbSizeBytes: after.dbSizeBytes,
              quotaBackendBytes: this.d.quotaBytes,
            },
          );
        }
      }
      log.info('etcd maintenance done', {
        dbSizeBytes: after.dbSizeBytes,
        dbSizeInUseBytes: after.dbSizeInUseBytes,
        alarms: after.alarms,
      });
      return after;
    } catch (err) {
      log.warn('etcd maintenance failed', { error: errorText(err) });
      return reading;
    }
  }

  private withdrawIfStale(): void {
    if (!shouldWithdraw(this.freshness, this.d.now().getTime(), this.d.staleAfterMs)) return;
    this.freshness = { ...this.freshness, withdrawn: true };
    this.d.stats.etcd.withdrawn++;
    this.d.log.warn('etcd unreadable for longer than the staleness bound; withdrawing the etcd report', {
      lastObservedTime: this.lastObservedTime ?? null,
    });
    const keep: EtcdStatus = {};
    if (this.lastObservedTime) keep.observedTime = this.lastObservedTime;
    if (this.d.quotaBytes !== undefined) keep.quotaBackendBytes = this.d.quotaBytes;
    if (this.d.stats.etcd.lastDefragTime) keep.lastDefragTime = this.d.stats.etcd.lastDefragTime;
    this.d.section.force(keep);
  }
}
