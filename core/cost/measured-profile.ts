/**
 * The cost model's inputs: counts per unit of work measured on the local fleet. `npm run bench -- cost`
 * measures them again and reports any that drifted (`inputsCheck`); paste its `measured` here when the
 * code's cost changes on purpose.
 *
 * Billed milliseconds are wall time on the local stack of a shared 2-core machine (load average 14.82/11.43/5.91
 * during this run, i.e. several times oversubscribed) with the clusters' API servers on the same thread:
 * an upper bound on what Lambda would bill. Counts (invocations, events, request units, log bytes, metric
 * series) do not depend on the machine.
 */
import type { UsageProfile } from './counts.ts';

export const MEASURED_PROFILE: UsageProfile = {
  "measuredBy": "npm run bench -- cost --clusters 4 --pools 10 --steady-seconds 30 (2026-12-02)",
  "memoryMb": {
    "reconcile": 512,
    "audit": 1024,
    "rollout": 512,
    "probe": 512,
    "cloudEvents": 512
  },
  "newPool": {
    "invocations": {
      "reconcile": 8
    },
    "billedMs": {
      "reconcile": 27015.525
    },
    "billedEvents": 8,
    "ruleMatches": 8,
    "readUnits": 12.85,
    "writeUnits": 23.275,
    "sqsMessages": 0,
    "logBytes": 12871.75
  },
  "poolDay": {
    "invocations": {},
    "billedMs": {},
    "billedEvents": 0,
    "ruleMatches": 0,
    "readUnits": 0,
    "writeUnits": 0,
    "sqsMessages": 0,
    "logBytes": 86.4
  },
  "idleRolloutTick": {
    "invocations": {
      "rollout": 1
    },
    "billedMs": {
      "rollout": 17.2
    },
    "billedEvents": 0,
    "ruleMatches": 0,
    "readUnits": 0,
    "writeUnits": 0,
    "sqsMessages": 0,
    "logBytes": 540.8
  },
  "audit": {
    "perRun": {
      "invocations": {
        "audit": 1
      },
      "billedMs": {
        "audit": 30
      },
      "billedEvents": 0,
      "ruleMatches": 0,
      "readUnits": 0,
      "writeUnits": 0,
      "sqsMessages": 0,
      "logBytes": 0
    },
    "perCluster": {
      "invocations": {
        "audit": 1
      },
      "billedMs": {},
      "billedEvents": 1,
      "ruleMatches": 1,
      "readUnits": 0,
      "writeUnits": 0,
      "sqsMessages": 0,
      "logBytes": 0
    },
    "perPool": {
      "invocations": {},
      "billedMs": {
        "audit": 153.725
      },
      "billedEvents": 0,
      "ruleMatches": 0,
      "readUnits": 0.313,
      "writeUnits": 0.225,
      "sqsMessages": 0,
      "logBytes": 149.4
    }
  },
  "probe": {
    "perRun": {
      "invocations": {
        "probe": 1
      },
      "billedMs": {},
      "billedEvents": 0,
      "ruleMatches": 0,
      "readUnits": 0,
      "writeUnits": 0,
      "sqsMessages": 0,
      "logBytes": 0
    },
    "perPool": {
      "invocations": {},
      "billedMs": {
        "probe": 112.7
      },
      "billedEvents": 0,
      "ruleMatches": 0,
      "readUnits": 0.113,
      "writeUnits": 2,
      "sqsMessages": 0,
      "logBytes": 54.275
    }
  },
  "rolloutPerPool": {
    "invocations": {
      "reconcile": 9,
      "rollout": 0.025
    },
    "billedMs": {
      "reconcile": 16388.55,
      "rollout": 1399.335
    },
    "billedEvents": 9,
    "ruleMatches": 9,
    "readUnits": 17.638,
    "writeUnits": 28.8,
    "sqsMessages": 0,
    "logBytes": 13293.165
  },
  "sizes": {
    "measuredClusters": 4,
    "rolloutStateBytesPerCluster": 418.5,
    "putEventsEntriesPerCall": 1.12
  },
  "metricSeries": {
    "fixed": 6,
    "perCluster": 8
  }
};
