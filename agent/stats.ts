/** Counters of what the agent did, for the in-process caller (local kubelet, tests) and the logs. */
export type StepName = 'etcdAuth' | 'bootstrap' | 'leader' | 'etcd' | 'report';

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
  /** etcd auth (only with --etcd-auth-limited-user): when this agent turned it on, and last found it right. */
  etcdAuth: {
    /** Auth calls made (users, roles, permissions, the switch). */
    calls: number;
    /** Times this agent turned auth on (once per etcd that started empty). */
    enables: number;
    /** When the last `auth enable` was sent, and when etcd answered it. */
    enableRequestedAt?: string;
    enabledAt?: string;
    verifiedAt?: string;
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
    etcdAuth: { calls: 0, enables: 0 },
    statusWrites: 0,
    errors: { etcdAuth: 0, bootstrap: 0, leader: 0, etcd: 0, report: 0 },
  };
}
