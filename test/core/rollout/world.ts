/**
 * A tiny simulated fleet for the pure state machine tests: each cluster's pools are either at the
 * previous spec or at the target; a health function says whether a target pool is healthy at a step.
 * Actions from decide() change the world exactly as the handler's apply/rollback would.
 */

import type { ClusterObservation, RolloutAction, RolloutSpecInput, RolloutState } from '../../../core/rollout/index.ts';
import { clustersToObserve, decide, newRolloutState, parseRolloutSpec } from '../../../core/rollout/index.ts';

export type Health = 'healthy' | 'unhealthy' | 'invalid' | 'unreachable';

export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (ms: number) => new Date(T0 + ms);

export function ids(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
}

export function rollout(n: number, input: Partial<RolloutSpecInput> = {}): RolloutState {
  const spec = parseRolloutSpec({ id: 'r1', version: '0.2.0', soak: 0, progressDeadline: '10m', ...input });
  return newRolloutState(spec, ids(n), at(0));
}

export function observation(
  clusterId: string,
  ms: number,
  health: Health,
  atTarget = true,
  pools = 2,
): ClusterObservation {
  if (health === 'unreachable')
    return { clusterId, observedAt: at(ms).toISOString(), pools: [], error: 'connect ECONNREFUSED' };
  return {
    clusterId,
    observedAt: at(ms).toISOString(),
    pools: Array.from({ length: pools }, (_, i) => {
      const good = atTarget && health === 'healthy';
      return {
        name: `pool-${i}`,
        specAtTarget: atTarget,
        specAtPrevious: !atTarget,
        available: good,
        atVersion: good,
        leaderHealthy: good,
        ...(atTarget && health === 'invalid' ? { invalid: 'spec.version: unknown bundle "0.2.0"' } : {}),
        ...(good ? {} : { reason: atTarget ? 'not available: WorkloadNotReady' : 'spec not updated yet' }),
      };
    }),
  };
}

export class World {
  readonly atTarget = new Set<string>();
  readonly everApplied = new Set<string>();
  readonly log: RolloutAction[] = [];
  state: RolloutState;
  ms = 0;
  readonly health: (clusterId: string, ms: number) => Health;
  constructor(state: RolloutState, health: (clusterId: string, ms: number) => Health = () => 'healthy') {
    this.state = state;
    this.health = health;
  }

  observe(): ClusterObservation[] {
    return clustersToObserve(this.state).map((id) =>
      observation(id, this.ms, this.health(id, this.ms), this.atTarget.has(id)),
    );
  }

  act(actions: RolloutAction[]): void {
    for (const a of actions) {
      this.log.push(a);
      if (a.kind === 'apply-version') {
        this.atTarget.add(a.clusterId);
        this.everApplied.add(a.clusterId);
      } else this.atTarget.delete(a.clusterId);
    }
  }

  /** One tick: observe, decide, act. */
  step(stepMs = 1000): RolloutAction[] {
    this.ms += stepMs;
    const d = decide(this.state, this.observe(), at(this.ms));
    this.state = d.state;
    this.act(d.actions);
    return d.actions;
  }

  runUntilDone(maxSteps = 500, stepMs = 1000, each?: (w: World) => void): RolloutState {
    for (let i = 0; i < maxSteps; i++) {
      this.step(stepMs);
      each?.(this);
      if (['Succeeded', 'Failed', 'Aborted', 'RolledBack'].includes(this.state.phase)) return this.state;
    }
    throw new Error(`rollout not finished after ${maxSteps} steps: ${this.state.phase} ${this.state.reason}`);
  }

  phaseOf(id: string) {
    return this.state.clusters.find((c) => c.id === id)!.phase;
  }
}
