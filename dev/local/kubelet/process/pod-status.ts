/**
 * The pod status a kubelet would report for what process mode runs: Ready when etcd, the apiserver and the
 * agent all run; a failure shown on the container that failed, the way kubectl describe shows a crash loop.
 */
import { CONTAINERS } from './pod-plan.ts';
import type { RunningPoolSpirit } from './pool-spirit-process.ts';

export type PodPhaseInRuntime = 'starting' | 'running' | 'failed';

/** Why the pod's processes are not running. `container` is absent when the pod could not be set up at all. */
export interface PodFailure {
  container?: string;
  /** lastState.terminated.reason for a container, or the waiting reason for a pod that could not be set up. */
  reason: string;
  exitCode?: number | null;
  signal?: NodeJS.Signals | null;
  /** The binary's last lines, or the setup error. */
  message: string;
  at: Date;
}

export interface RuntimeView {
  phase: PodPhaseInRuntime;
  running?: Pick<RunningPoolSpirit, 'startedAt' | 'agent'>;
  failure?: PodFailure;
  restarts: number;
}

/** Exit code a kubelet reports for a container ended by a signal (128 + signal number). */
const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, number>> = { SIGKILL: 137, SIGTERM: 143, SIGSEGV: 139, SIGABRT: 134 };

export function podStatus(
  containers: ReadonlyArray<{ name: string; image?: string }>,
  view: RuntimeView,
  now: number,
): Record<string, unknown> {
  const at = new Date(now).toISOString();
  const startedAt = view.running?.startedAt.toISOString();
  const agentRuns = !!view.running?.agent();
  const failure = view.failure;
  const containerStatuses = containers.map((c) => {
    const runs = view.phase === 'running' && (c.name !== CONTAINERS.agent || agentRuns);
    const failedHere = view.phase === 'failed' && failure?.container === c.name;
    const waiting =
      view.phase === 'starting'
        ? { reason: 'ContainerCreating' }
        : view.phase === 'failed'
          ? failure?.container
            ? {
                reason: 'CrashLoopBackOff',
                message: failedHere
                  ? `back-off restarting failed container ${c.name}`
                  : `restarting with container ${failure.container} (process mode restarts the pod's processes together)`,
              }
            : { reason: failure?.reason ?? 'StartError', message: failure?.message }
          : { reason: 'NotStarted', message: 'the agent was not started (process kubelet startAgent: false)' };
    const lastState =
      failedHere && failure
        ? {
            terminated: {
              exitCode: failure.exitCode ?? (failure.signal ? (SIGNAL_EXIT[failure.signal] ?? 128) : 1),
              ...(failure.signal ? { signal: failure.signal } : {}),
              reason: failure.reason,
              message: failure.message,
              finishedAt: failure.at.toISOString(),
            },
          }
        : {};
    return {
      name: c.name,
      image: c.image,
      imageID: '',
      ready: runs,
      started: runs,
      restartCount: view.restarts,
      state: runs ? { running: { startedAt } } : { waiting },
      lastState,
    };
  });
  const unready = containerStatuses.filter((c) => !c.ready).map((c) => c.name);
  const ready = unready.length === 0;
  const cond = (type: string, ok: boolean, reason?: string, message?: string) => ({
    type,
    status: ok ? 'True' : 'False',
    lastTransitionTime: at,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  });
  const notReady = ['ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`] as const;
  return {
    phase: view.phase === 'starting' && view.restarts === 0 ? 'Pending' : 'Running',
    hostIP: '127.0.0.1',
    podIP: '127.0.0.1',
    podIPs: [{ ip: '127.0.0.1' }],
    ...(startedAt ? { startTime: startedAt } : {}),
    conditions: [
      cond('PodScheduled', true),
      cond('Initialized', true),
      ready ? cond('ContainersReady', true) : cond('ContainersReady', false, ...notReady),
      ready ? cond('Ready', true) : cond('Ready', false, ...notReady),
    ],
    containerStatuses,
  };
}
