import { covers } from './diff.ts';
import { contentVersion, type KubeObject } from './kube.ts';
import type { ComponentVersions, Condition, ConditionType, Phase, PoolSpiritStatus } from './poolspirit/api.ts';
import type { FieldIssue } from './poolspirit/resolved.ts';
import { workloadVersions } from './render/changes.ts';

export interface WorkloadObservation {
  exists: boolean;
  /** The live Deployment has the desired template and finished rolling it out. */
  upToDate: boolean;
  /** Its pod is ready (all containers pass readiness). */
  ready: boolean;
  /** Versions the running pod has, once a rollout completed. */
  currentVersions?: ComponentVersions;
  /** Why the pod is not ready, read from the pod itself (scheduling, a crash loop), when the caller read it. */
  problem?: PodProblem;
}

export interface PodProblem {
  reason: string;
  message: string;
}

/** The parts of a Pod that say why it is not ready. */
export interface PodLike {
  metadata: { name?: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    containerStatuses?: Array<{
      name: string;
      ready?: boolean;
      state?: { waiting?: { reason?: string; message?: string } };
      lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
    }>;
  };
}

/** A condition message stays one readable line: the binary's own error line, not its whole log. */
const PROBLEM_MESSAGE_MAX = 400;

/**
 * The first reason a pool-spirit pod is not ready, in the words a person would look for: the scheduler's
 * explanation when no node can take it (with what the pool needs), or the failing container and the last
 * line it printed. Undefined when every pod is ready or nothing more specific is known.
 */
export function podProblem(pods: readonly PodLike[], nodePool: string): PodProblem | undefined {
  const pod = pods.find(
    (p) =>
      !p.metadata.deletionTimestamp && !p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  if (!pod) return undefined;
  const bounded = (text: string) =>
    text.length > PROBLEM_MESSAGE_MAX ? `${text.slice(0, PROBLEM_MESSAGE_MAX - 1)}…` : text;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    return {
      reason: 'Unschedulable',
      message: bounded(
        `no node can run the pool-spirit pod: NodePool ${nodePool} needs a Ready node that fits it (scheduler: ${scheduled.message ?? scheduled.reason ?? 'no reason given'})`,
      ),
    };
  }
  // The container that terminated is the one that failed; the others may only be waiting on it.
  const statuses = [...(pod.status?.containerStatuses ?? [])].sort(
    (a, b) => Number(!a.lastState?.terminated) - Number(!b.lastState?.terminated),
  );
  for (const c of statuses) {
    const waiting = c.state?.waiting;
    const terminated = c.lastState?.terminated;
    if (
      waiting?.reason &&
      waiting.reason !== 'ContainerCreating' &&
      (terminated || /BackOff|Error|Invalid/.test(waiting.reason))
    ) {
      const said = lastMeaningfulLine(terminated?.message ?? waiting.message ?? '');
      // How it ended, when the kubelet says more than "Error": OOMKilled is the one a person must see.
      const how = [
        terminated?.reason && terminated.reason !== 'Error' ? terminated.reason : undefined,
        terminated?.exitCode !== undefined ? `exit code ${terminated.exitCode}` : undefined,
      ].filter((part) => part !== undefined);
      const code = how.length > 0 ? ` (${how.join(', ')})` : '';
      return {
        reason: waiting.reason,
        message: bounded(`container ${c.name} is in ${waiting.reason}${code}${said ? `: ${said}` : ''}`),
      };
    }
  }
  const unready = (pod.status?.containerStatuses ?? []).filter((c) => !c.ready).map((c) => c.name);
  if (unready.length)
    return {
      reason: 'ContainersNotReady',
      message: `the pool-spirit pod's containers are not ready: ${unready.join(', ')}`,
    };
  return undefined;
}

/** The line of a binary's output that says what went wrong: an error line if there is one, else the last. */
function lastMeaningfulLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /^(Error|error|E\d{4}|F\d{4}|panic)/.test(l)) ?? lines.at(-1) ?? '';
}

type DeploymentLike = KubeObject & {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
};

export function observeWorkload(
  live: KubeObject | undefined,
  desired?: KubeObject,
  problem?: PodProblem,
): WorkloadObservation {
  if (!live) return { exists: false, upToDate: false, ready: false };
  const d = live as DeploymentLike;
  const s = d.status ?? {};
  const want = d.spec?.replicas ?? 1;
  const rolledOut =
    (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) &&
    (s.updatedReplicas ?? 0) >= want &&
    (s.replicas ?? 0) <= want;
  const upToDate = rolledOut && (!desired || covers(desired.spec, live.spec, contentVersion(live)));
  const ready = (s.readyReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want;
  return {
    exists: true,
    upToDate,
    ready,
    currentVersions: rolledOut && ready ? workloadVersions(live) : undefined,
    ...(problem ? { problem } : {}),
  };
}

export interface StatusInputs {
  generation: number;
  now: Date;
  previous?: PoolSpiritStatus;
  /** Set when the spec failed to parse: every issue names its field. Nothing else is evaluated. */
  invalid?: FieldIssue[];
  paused?: boolean;
  /** From renderPoolSpirit. */
  render?: {
    endpoint: string;
    versions: ComponentVersions;
    bootstrapHash: string;
    pki: { notAfter: string; caNotAfter: string };
  };
  /** Every PKI Secret exists in the cluster with the rendered content. */
  secretsApplied?: boolean;
  workload?: WorkloadObservation;
  /** A leader whose Lease renewTime is older than this is stale (default 60 s: 4 lease durations). */
  leaderStaleAfterSeconds?: number;
  /**
   * Compat pools only (label poolspirit.io/yurt-coordinator=compat): whether the kube-system objects YurtHubs
   * read hold the cluster's compat pools. Reported beside Available, like LeaderElected: the pool-spirit
   * itself serves either way. Absent for other pools, so the condition goes when a pool leaves compat.
   */
  yurtCoordinatorObjects?: { status: Condition['status']; reason: string; message: string };
}

/**
 * The status fields the reconciler owns: observedGeneration, phase, conditions, endpoint, versions and
 * certificates. The agent owns leader, bootstrap and etcd (read here from `previous`, never returned), so
 * each side can apply its own fields without taking the other's.
 *
 * Available = CertificatesReady ∧ WorkloadReady ∧ Bootstrapped. LeaderElected is reported beside it: a
 * leader exists only once the pool's YurtHubs elect one, which a healthy pool-spirit cannot force.
 */
export function poolSpiritStatus(inputs: StatusInputs): PoolSpiritStatus {
  const { previous, now, generation } = inputs;
  const prevConditions = previous?.conditions ?? [];
  const condition = (type: ConditionType, status: Condition['status'], reason: string, message: string): Condition => {
    const before = prevConditions.find((c) => c.type === type);
    const unchanged = before?.status === status;
    return {
      type,
      status,
      observedGeneration: generation,
      lastTransitionTime: unchanged && before ? before.lastTransitionTime : now.toISOString(),
      reason,
      message,
    };
  };

  if (inputs.invalid && inputs.invalid.length > 0) {
    const message = inputs.invalid.map((i) => `${i.field}: ${i.message}`).join('; ');
    // Nothing is applied for an invalid spec, so the other conditions keep describing what still runs.
    const kept = prevConditions.filter((c) => c.type !== 'Available');
    return {
      ...owned(previous),
      observedGeneration: generation,
      phase: 'Invalid',
      conditions: [...kept, condition('Available', 'False', 'Invalid', `invalid spec: ${message}`)],
    };
  }

  const render = inputs.render;
  const workload = inputs.workload ?? { exists: false, upToDate: false, ready: false };
  let certs: Condition;
  if (!inputs.secretsApplied) {
    certs = condition('CertificatesReady', 'False', 'Pending', 'certificates are not yet stored in the cluster');
  } else {
    if (!render) throw new Error('status: the PKI Secrets are applied but the render that made them is missing');
    const { notAfter } = render.pki;
    certs =
      Date.parse(notAfter) <= now.getTime()
        ? condition('CertificatesReady', 'False', 'Expired', `a certificate expired at ${notAfter}`)
        : condition('CertificatesReady', 'True', 'Issued', `valid until ${notAfter}`);
  }
  const wl = !workload.exists
    ? condition('WorkloadReady', 'False', 'NotCreated', 'the pool-spirit Deployment does not exist yet')
    : !workload.upToDate
      ? condition(
          'WorkloadReady',
          'False',
          'RollingOut',
          `the pool-spirit pod is being replaced with the desired one${workload.problem ? `; ${workload.problem.message}` : ''}`,
        )
      : !workload.ready
        ? condition(
            'WorkloadReady',
            'False',
            workload.problem?.reason ?? 'NotReady',
            workload.problem?.message ?? 'the pool-spirit pod is not ready',
          )
        : condition('WorkloadReady', 'True', 'Ready', 'the pool-spirit pod is ready');
  const applied = previous?.bootstrap?.appliedHash;
  // After a pod restart etcd is empty and an old appliedHash proves nothing, so it only counts while the
  // workload is ready (the agent re-applies and re-reports on every start).
  const boot =
    wl.status !== 'True'
      ? condition('Bootstrapped', 'Unknown', 'WorkloadNotReady', 'waiting for the pool-spirit pod')
      : render && applied === render.bootstrapHash
        ? condition('Bootstrapped', 'True', 'Applied', 'the agent applied the current bootstrap manifests')
        : condition(
            'Bootstrapped',
            'False',
            'Pending',
            applied
              ? 'the agent has not applied the current bootstrap manifests yet'
              : 'the agent has not reported a bootstrap yet',
          );
  const leader = leaderCondition(previous, now, inputs.leaderStaleAfterSeconds ?? 60, condition);
  const failing = [certs, wl, boot].find((c) => c.status !== 'True');
  const available = failing
    ? condition('Available', 'False', NOT_READY_REASON[failing.type as ConditionType], failing.message)
    : condition('Available', 'True', 'Available', 'certificates, workload and bootstrap are ready');

  const wasUp = previous?.phase === 'Running' || previous?.phase === 'Degraded';
  const phase: Phase = inputs.paused
    ? 'Paused'
    : available.status === 'True'
      ? 'Running'
      : wasUp
        ? 'Degraded'
        : workload.exists
          ? 'Provisioning'
          : 'Pending';

  return {
    observedGeneration: generation,
    phase,
    conditions: [
      certs,
      wl,
      boot,
      leader,
      available,
      ...(inputs.yurtCoordinatorObjects
        ? [
            condition(
              'YurtCoordinatorObjectsReady',
              inputs.yurtCoordinatorObjects.status,
              inputs.yurtCoordinatorObjects.reason,
              inputs.yurtCoordinatorObjects.message,
            ),
          ]
        : []),
    ],
    endpoint: render?.endpoint ?? previous?.endpoint,
    versions: {
      desired: render?.versions ?? previous?.versions?.desired,
      current: workload.currentVersions ?? previous?.versions?.current,
    },
    certificates: render
      ? { notAfter: render.pki.notAfter, caNotAfter: render.pki.caNotAfter }
      : previous?.certificates,
  };
}

function leaderCondition(
  previous: PoolSpiritStatus | undefined,
  now: Date,
  staleAfterSeconds: number,
  condition: (type: ConditionType, status: Condition['status'], reason: string, message: string) => Condition,
): Condition {
  const holder = previous?.leader?.holder;
  if (!holder) return condition('LeaderElected', 'False', 'NoLeader', 'no YurtHub holds the kube-system/yurthub Lease');
  const renewed = Date.parse(previous?.leader?.renewTime ?? '');
  const age = (now.getTime() - renewed) / 1000;
  if (!Number.isFinite(age) || age > staleAfterSeconds) {
    return condition(
      'LeaderElected',
      'False',
      'LeaderStale',
      `${holder} last renewed the leader Lease ${Number.isFinite(age) ? `${Math.round(age)}s ago` : 'at an unknown time'}`,
    );
  }
  return condition('LeaderElected', 'True', 'Elected', `${holder} is the leader YurtHub`);
}

function owned(status: PoolSpiritStatus | undefined): PoolSpiritStatus {
  if (!status) return {};
  const { endpoint, versions, certificates } = status;
  return { endpoint, versions, certificates };
}

const NOT_READY_REASON: Record<ConditionType, string> = {
  CertificatesReady: 'CertificatesNotReady',
  WorkloadReady: 'WorkloadNotReady',
  Bootstrapped: 'NotBootstrapped',
  LeaderElected: 'LeaderLost',
  Available: 'Unavailable',
  YurtCoordinatorObjectsReady: 'YurtCoordinatorObjectsNotReady',
};

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * The changes between two statuses worth a Kubernetes Event: conditions turning True or False (not the
 * first False of a new object), a new leader, an invalid spec (or a different invalidity), a completed
 * version change. Timestamps, renewals and generation bumps are not events.
 */
export function meaningfulTransitions(
  oldStatus: PoolSpiritStatus | undefined,
  newStatus: PoolSpiritStatus,
): StatusEvent[] {
  const events: StatusEvent[] = [];
  const before = new Map((oldStatus?.conditions ?? []).map((c) => [c.type, c]));
  for (const c of newStatus.conditions ?? []) {
    const old = before.get(c.type);
    if (c.type === 'Available' && c.reason === 'Invalid') {
      if (old?.reason !== 'Invalid' || old.message !== c.message)
        events.push({ type: 'Warning', reason: 'InvalidSpec', message: c.message });
      continue;
    }
    if (old?.status === c.status) continue;
    if (c.status === 'True') {
      events.push({ type: 'Normal', reason: c.type, message: c.message });
    } else if (old?.status === 'True') {
      events.push({
        type: 'Warning',
        reason: NOT_READY_REASON[c.type as ConditionType] ?? `${c.type}False`,
        message: c.message,
      });
    }
  }
  const oldHolder = oldStatus?.leader?.holder;
  const newHolder = newStatus.leader?.holder;
  if (oldHolder && newHolder && oldHolder !== newHolder) {
    events.push({ type: 'Normal', reason: 'LeaderChanged', message: `leader moved from ${oldHolder} to ${newHolder}` });
  }
  const oldBundle = oldStatus?.versions?.current?.bundle;
  const newBundle = newStatus.versions?.current?.bundle;
  if (oldBundle && newBundle && oldBundle !== newBundle) {
    events.push({
      type: 'Normal',
      reason: 'VersionChanged',
      message: `now running bundle ${newBundle} (was ${oldBundle})`,
    });
  }
  if (oldStatus?.phase !== 'Paused' && newStatus.phase === 'Paused')
    events.push({ type: 'Normal', reason: 'Paused', message: 'reconciliation paused by spec.paused' });
  return events;
}
