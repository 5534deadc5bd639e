/**
 * The cost model's inputs: counts per unit of work measured on the local fleet. `npm run bench -- cost`
 * measures them again and reports any that drifted (`inputsCheck`); paste its `measured` here when the
 * code's cost changes on purpose.
 *
 * Billed milliseconds are wall time on the local stack of a shared 2-core machine (load average 12.66/12.03/10.48
 * during this run) with the clusters' API servers on the same thread: they vary several-fold between runs
 * (an earlier run under load 11-15 measured the probe at 113 ms a pool against 7 ms here, a rollout's
 * reconcile at 1.8 s against 0.38 s). Counts (invocations, events, request units, log bytes, metric series)
 * do not depend on the machine: they were identical in both runs. Metric series re-measured after decision
 * 0019 (clusterId as metadata, not a dimension): 14 fixed, none per cluster (before: 6 + 8 per cluster).
 */
import type { UsageProfile } from './counts.ts';

export const MEASURED_PROFILE: UsageProfile = {
  measuredBy: 'npm run bench -- cost --clusters 4 --pools 10 --steady-seconds 30 (2026-12-02)',
  memoryMb: {
    reconcile: 512,
    audit: 1024,
    rollout: 512,
    probe: 512,
    cloudEvents: 512,
  },
  newPool: {
    invocations: {
      reconcile: 8,
    },
    billedMs: {
      reconcile: 14714.35,
    },
    billedEvents: 8,
    ruleMatches: 8,
    readUnits: 12.45,
    writeUnits: 22.55,
    sqsMessages: 0,
    logBytes: 12797.925,
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
      rollout: 7.6,
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
        audit: 9,
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
      billedMs: {},
      billedEvents: 1,
      ruleMatches: 1,
      readUnits: 0,
      writeUnits: 0,
      sqsMessages: 0,
      logBytes: 0,
    },
    perPool: {
      invocations: {},
      billedMs: {
        audit: 78.075,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0.313,
      writeUnits: 0.225,
      sqsMessages: 0,
      logBytes: 148.95,
    },
  },
  probe: {
    perRun: {
      invocations: {
        probe: 1,
      },
      billedMs: {},
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0,
      writeUnits: 0,
      sqsMessages: 0,
      logBytes: 0,
    },
    perPool: {
      invocations: {},
      billedMs: {
        probe: 7.025,
      },
      billedEvents: 0,
      ruleMatches: 0,
      readUnits: 0.113,
      writeUnits: 2,
      sqsMessages: 0,
      logBytes: 54.225,
    },
  },
  rolloutPerPool: {
    invocations: {
      reconcile: 9,
      rollout: 0.025,
    },
    billedMs: {
      reconcile: 3447.2,
      rollout: 145.27,
    },
    billedEvents: 9,
    ruleMatches: 9,
    readUnits: 15.85,
    writeUnits: 27.25,
    sqsMessages: 0,
    logBytes: 13322.105,
  },
  metricSeries: {
    fixed: 14,
    perCluster: 0,
  },
  sizes: {
    measuredClusters: 4,
    rolloutStateBytesPerCluster: 418.5,
    putEventsEntriesPerCall: 1.12,
  },
};
