/**
 * Operator commands on a stored rollout. Each is idempotent (pausing a paused rollout changes nothing), so
 * a duplicated command event is harmless; a command that makes no sense in the current phase is refused
 * with the phase in the message. The actions a command implies (a rollback) come from the decide step
 * that the handler runs right after.
 */
import { beginClusterRollback, isChanged } from './decide.ts';
import type { RolloutAction, RolloutCommand, RolloutState } from './types.ts';

export class RolloutCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RolloutCommandError';
  }
}

export function applyCommand(
  input: RolloutState,
  cmd: RolloutCommand,
  now: Date,
): { state: RolloutState; changed: boolean } {
  const state = structuredClone(input);
  const at = now.toISOString();
  const by = cmd.by ? ` by ${cmd.by}` : '';
  const refuse = (what: string) => {
    throw new RolloutCommandError(
      `cannot ${cmd.command} rollout ${state.id}: it is ${state.phase}${state.reason ? ` (${state.reason})` : ''}; ${what}`,
    );
  };
  switch (cmd.command) {
    case 'pause':
      if (state.phase === 'Paused') break;
      if (state.phase !== 'Progressing') refuse('only a progressing rollout can be paused');
      state.phase = 'Paused';
      state.reason = `paused${by}: no new wave starts; clusters already changing are still watched`;
      break;
    case 'resume':
      if (state.phase === 'Progressing') break;
      if (state.phase !== 'Paused') refuse('only a paused rollout can be resumed');
      state.phase = 'Progressing';
      state.reason = `resumed${by}`;
      break;
    case 'abort':
      if (state.phase === 'Aborted') break;
      if (!['Progressing', 'Paused', 'RollingBack'].includes(state.phase)) refuse('it has already finished');
      state.phase = 'Aborted';
      state.reason = `aborted${by}: nothing more is changed or undone`;
      break;
    case 'rollback': {
      if (state.phase === 'RollingBack' || state.phase === 'RolledBack') break;
      const ignored: RolloutAction[] = [];
      state.phase = 'RollingBack';
      state.reason = `rollback requested${by}`;
      for (const c of state.clusters) if (isChanged(c)) beginClusterRollback(c, at, ignored);
      break;
    }
    default:
      throw new RolloutCommandError(
        `unknown rollout command ${JSON.stringify((cmd as { command?: unknown }).command)}: expected pause, resume, abort or rollback`,
      );
  }
  const changed = JSON.stringify(state) !== JSON.stringify(input);
  if (changed) state.updatedAt = at;
  return { state, changed };
}
