/** Counters of what the agent did, for the in-process caller (local kubelet, tests) and the logs. */
export type StepName = 'bootstrap' | 'leader' | 'etcd' | 'report';

export interface AgentStats {
  /** Passes of the main loop. */
  ticks: number;
  bootstrap: {
    /** Times the manifests were applied (the first time, after a change, after an object went missing). */
    applies: number;
    /** Server-side apply requests sent. */
    objectsApplied: number;
    appliedHash?: string;
    appliedTime?: string;
  };
  leader: { reads: number; holder?: string; withdrawn: number };
  etcd: {
    reads: number;
    compactions: number;
    defrags: number;
    alarmsDisarmed: number;
    lastDefragTime?: string;
    withdrawn: number;
  };
  /** Merge patches of the PoolSpirit status accepted by the host. */
  statusWrites: number;
  /** Failures per step since start. */
  errors: Record<StepName, number>;
  lastError?: { step: StepName; message: string; time: string };
}

export function newStats(): AgentStats {
  return {
    ticks: 0,
    bootstrap: { applies: 0, objectsApplied: 0 },
    leader: { reads: 0, withdrawn: 0 },
    etcd: { reads: 0, compactions: 0, defrags: 0, alarmsDisarmed: 0, withdrawn: 0 },
    statusWrites: 0,
    errors: { bootstrap: 0, leader: 0, etcd: 0, report: 0 },
  };
}
