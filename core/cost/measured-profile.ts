/**
 * The cost model's inputs: counts per unit of work measured on the local fleet. `npm run bench -- cost`
 * measures them again and reports any that drifted (`inputsCheck`); paste its `measured` here when the
 * code's cost changes on purpose.
 *
 * Billed milliseconds are wall time on the local stack of a shared 2-core machine with the clusters' API servers
 * on the same thread. This run had the machine nearly to itself (load average 1.06/1.76/1.62 before it,
 * 0.62/1.51/1.54 after), so most durations are lower than in the earlier run under load 12: a pool's audit
 * 20 ms against 78 ms, its probe 5.4 ms against 7 ms, the rollout function 25 ms a pool against 145 ms, a new
 * pool's reconciles 3.7 s against 14.7 s (that one also because issuing a pool's PKI fell from 33 ms to 3.7 ms,
 * decision 0027); a rollout's reconcile took 0.40 s against 0.38 s. They still vary several-fold between runs
 * (a run under load 11-15 measured the probe at 113 ms a pool, a rollout's reconcile at 1.8 s). Counts
 * (invocations, events, request units, log bytes, metric series) did not depend on the load: the two earlier
 * runs counted the same. This run's counts differ, after a change to the code (decision 0026: a notice a later
 * pass already served costs one eventually consistent read and no write): a new pool takes 7.1 reconciles
 * instead of 8, 17.5 write units instead of 22.6 and 18.1 read units instead of 12.5; a pool in a rollout
 * 9.2 reconciles, 35.9 write and 27.7 read units instead of 9, 27.3 and 15.9; the forwarders sent fewer
 * notices (6.8 a new pool instead of 8) in fuller calls (1.25 PutEvents entries instead of 1.12). Metric
 * series: 16 fixed (ServedEvents is new), none per cluster (decision 0019: clusterId is metadata, not a
 * dimension; before it, 6 + 8 per cluster).
 *
 * Measured again after decision 0028 (one notice per pool per coalescing window, and only when what the
 * reconciler derives from a Deployment or Pod changes), load average 1.25/1.88/2.21 before, 0.87/1.70/2.14
 * after: a new pool takes 2.7 reconciles instead of 7.1, 6.6 write units instead of 17.5 and 4.75 read units
 * instead of 18.1 (fewer invocations, and fewer of them waiting on a held lease, one read per look); a pool in
 * a rollout 4.7 reconciles, 12.3 write and 9.6 read units instead of 9.2, 35.9 and 27.7; the forwarders sent
 * 2.7 notices a new pool instead of 6.8, 1.28 to a PutEvents call.
 *
 * Read units only, after decision 0032 (an invocation reads the pool's item and the cluster's registration in
 * one consistent BatchGetItem, so the pool's item costs 1 read unit instead of 0.5):
 * `npm run bench -- cost --clusters 4 --pools 10 --steady-seconds 30` counted 5.875 read units a new pool
 * instead of 4.75, and 13.1 a pool in a rollout instead of 9.6; every other count was within the check's
 * tolerance, and the durations are left as the quieter run above measured them.
 *
 * `sizes.rolloutProgressItemBytes` replaced `rolloutStateBytesPerCluster` with decision 0050 (a rollout's
 * per-cluster progress in items of its own, the state item of constant size): the item of a finished
 * 20-pool cluster, as test/adapters/state-table/rollout-state.suite.ts measures it (the JSON of the stored
 * item; the test fails when the figure here drifts by a tenth). The bench reports the same figure for the
 * rollout it drives (`rolloutItems`).
 *
 * The probe, measured again after decision 0049 (the schedule fans out one probe per cluster; a pool is
 * written only when what the probe sees changes, or daily): `npm run bench -- cost --clusters 4 --pools 10
 * --steady-seconds 30` on a quiet machine (load average 0.22/1.94/3.75 before, 0.19/1.69/3.58 after), a probe
 * at rest after the first. A cluster costs one invocation, one PutEvents entry, one Query of its pools'
 * records (3.1 read units at 10 pools), one write (its run record) and its invocation's log lines (1.4 KB: they
 * do not grow with its pools while they are healthy); a pool 6.5 ms and the heartbeat's
 * share of a daily write, 0.007 write units (2 × 5 minutes ÷ 24 hours), instead of 19.4 ms, 0.113 read and 2
 * write units. The fan-out invocation took 5 ms. The same run measured the audit's table units a pool at
 * 0.363 read and 0.325 write (0.313 and 0.225 before); every other input was within the check's tolerance.
 *
 * The audit and the probe, measured again after decision 0051 (the audit stores its record only when what it
 * found changed, or daily, and renders without hashing) with the bench's new way of measuring them: at rest
 * with 10 pools a cluster and again with 30, so that what a cluster pays whatever its pools and what each
 * pool adds come apart, each invocation alone (they shared the main thread and were each billed the others'
 * work), the median of 7 runs; load average 4.39/6.32/5.86 before, 6.54/6.48/5.96 after. A cluster's audit
 * costs 35.5 ms, its notes, its reads of the hour's audits and its pools' probe records, and its log lines; a
 * pool 1.35 ms, 0.125 read units and the daily full record's share of a write, instead of 21 ms, 0.36 read
 * and 0.33 write units, 148 bytes of log, all of which had been charged per pool. A cluster's probe costs
 * 15.25 ms; a pool adds less time than the bench resolves (the medians at 10 and 30 pools a cluster differ by
 * less than their noise: recorded as 0; a run under load 10 measured 0.79 ms) and 0.05 read units (its record
 * in the cluster's Query). The other
 * inputs are left as measured before: this run's counted the rollout's write units 46% above them and 14
 * metric series instead of 16, and the code before decision 0051 counted the same in the same session, so
 * neither comes from it.
 */
import type { UsageProfile } from './counts.ts';

export const MEASURED_PROFILE: UsageProfile = {
  measuredBy:
    'npm run bench -- cost --clusters 4 --pools 10 --steady-seconds 30 (2026-12-02, after decision 0028; the audit and the probe 2026-12-07, after decision 0051)',
  memoryMb: {
    reconcile: 512,
    audit: 1024,
    rollout: 512,
    probe: 512,
    cloudEvents: 512,
  },
  newPool: {
    invocations: {
      reconcile: 2.7,
    },
    billedMs: {
      reconcile: 1363.025,
    },
    billedEvents: 2.7,
    ruleMatches: 2.7,
    readUnits: 5.875,
    writeUnits: 6.6,
    sqsMessages: 0,
    logBytes: 3747.625,
  },
  poolDay: {
    invocations: {},
    billedMs: {},
    billedEvents: 0,
    ruleMatches: 0,
    readUnits: 0,
    writeUnits: 0,
    sqsMessages: 0,
    logBytes: 0,
  },
  idleRolloutTick: {
    invocations: {
      rollout: 1,
    },
    billedMs: {
      rollout: 5.2,
    },
    billedEvents: 0,
    ruleMatches: 0,
    readUnits: 0,
    writeUnits: 0,
    sqsMessages: 0,
    logBytes: 540.4,
  },
  audit: {
    perRun: {
      invocations: {
        audit: 1,
      },
      billedMs: {
        audit: 7,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0,
      writeUnits: 0,
      sqsMessages: 0,
      logBytes: 0,
    },
    perCluster: {
      invocations: {
        audit: 1,
      },
      billedMs: {
        audit: 35.5,
      },
      billedEvents: 1,
      ruleMatches: 1,
      readUnits: 2.875,
      writeUnits: 1.25,
      sqsMessages: 0,
      logBytes: 1495.5,
    },
    perPool: {
      invocations: {},
      billedMs: {
        audit: 1.35,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0.125,
      writeUnits: 0.001,
      sqsMessages: 0,
      logBytes: 0,
    },
  },
  probe: {
    perRun: {
      invocations: {
        probe: 1,
      },
      billedMs: {
        probe: 3,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0,
      writeUnits: 0,
      sqsMessages: 0,
      logBytes: 0,
    },
    perCluster: {
      invocations: {
        probe: 1,
      },
      billedMs: {
        probe: 15.25,
      },
      billedEvents: 1,
      ruleMatches: 1,
      readUnits: 2.625,
      writeUnits: 1,
      sqsMessages: 0,
      logBytes: 1442.25,
    },
    perPool: {
      invocations: {},
      billedMs: {
        probe: 0,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0.05,
      writeUnits: 0.007,
      sqsMessages: 0,
      logBytes: 0,
    },
  },
  rolloutPerPool: {
    invocations: {
      reconcile: 4.7,
      rollout: 0.025,
    },
    billedMs: {
      reconcile: 751,
      rollout: 11.095,
    },
    billedEvents: 4.65,
    ruleMatches: 4.65,
    readUnits: 13.138,
    writeUnits: 12.3,
    sqsMessages: 0,
    logBytes: 5869.265,
  },
  metricSeries: {
    fixed: 16,
    perCluster: 0,
  },
  sizes: {
    rolloutProgressItemBytes: 500,
    putEventsEntriesPerCall: 1.28,
  },
};
