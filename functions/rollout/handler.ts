/**
 * Lambda entry point of `rollout`: drives fleet rollouts. Input: an operator command (start, pause,
 * resume, abort, rollback) invoked directly or routed as a `Rollout Command` event, or the schedule rule's
 * tick (every active rollout takes one step). Thin on purpose: the state machine is core/rollout, the
 * stored state adapters/state-table/rollout-state.ts, the steps rollout/run.ts, wiring rollout/deps.ts.
 */
import type { Context } from 'aws-lambda';
import { RolloutExistsError, RolloutNotFoundError } from '../../adapters/state-table/rollout-state.ts';
import { RolloutCommandError } from '../../core/rollout/commands.ts';
import { RolloutSpecError } from '../../core/rollout/limits.ts';
import { EventValidationError, parseEvent } from '../../events/envelope.ts';
import type { RolloutCommandDetail } from '../../events/rollout.ts';
import {
  ROLLOUT_COMMAND_DETAIL_TYPE,
  rolloutCommandDetailSchema,
  rolloutCommandEventSchema,
  rolloutScheduleEventSchema,
} from '../../events/rollout.ts';
import { SCHEDULED_EVENT_DETAIL_TYPE, SCHEDULED_EVENT_SOURCE } from '../../events/source.ts';
import { type LambdaHandler, observedHandler, type WithoutDeadLetters } from '../common/observed-handler.ts';
import type { TerminalReason, TerminalResult } from '../common/terminal.ts';
import type { RolloutDeps, RolloutDepsInput } from './deps.ts';
import { rolloutDeps, rolloutDepsFromEnvironment } from './deps.ts';
import type { RolloutResult } from './run.ts';
import { runRollout } from './run.ts';

export type { RolloutDeps, RolloutDepsInput } from './deps.ts';
export { defaultRolloutId, rolloutDeps } from './deps.ts';
export { ROLLOUT_FIELD_MANAGER } from './field-manager.ts';
export type { ActionOutcome, RolloutResult, RolloutSummary } from './run.ts';

/** A schedule event, a `Rollout Command` event, or a bare command → the command (fields named on error). */
export function parseRolloutInput(event: unknown): RolloutCommandDetail {
  const e = event as { source?: unknown; 'detail-type'?: unknown } | null;
  // An EventBridge envelope (detail-type, source or detail present) is judged as one, so a broken envelope
  // is reported by its envelope fields rather than as a bare command missing `command`.
  if (e && typeof e === 'object' && ('detail-type' in e || 'source' in e || 'detail' in e)) {
    if (e['detail-type'] === ROLLOUT_COMMAND_DETAIL_TYPE) return parseEvent(rolloutCommandEventSchema, event).detail;
    if (e['detail-type'] === SCHEDULED_EVENT_DETAIL_TYPE || e.source === SCHEDULED_EVENT_SOURCE) {
      parseEvent(rolloutScheduleEventSchema, event);
      return { command: 'tick' };
    }
    throw new EventValidationError([
      {
        path: 'detail-type',
        message: `expected "${SCHEDULED_EVENT_DETAIL_TYPE}" (from ${SCHEDULED_EVENT_SOURCE}) or "${ROLLOUT_COMMAND_DETAIL_TYPE}", got ${JSON.stringify(e['detail-type']) ?? 'nothing'}`,
      },
    ]);
  }
  return parseEvent(rolloutCommandDetailSchema, event);
}

export type RolloutHandler = (event: unknown, context?: Context) => Promise<RolloutResult>;

/**
 * The handler bound to dependencies (the local stack, the CLI and tests call this). Without a dead-letter
 * sink (the CLI, tests) input that can never succeed is thrown, not returned.
 */
export function createRolloutHandler(
  input: WithoutDeadLetters<RolloutDeps | RolloutDepsInput>,
): LambdaHandler<RolloutResult>;
export function createRolloutHandler(
  input: RolloutDeps | RolloutDepsInput | (() => RolloutDeps),
): LambdaHandler<RolloutResult | TerminalResult>;
export function createRolloutHandler(
  input: RolloutDeps | RolloutDepsInput | (() => RolloutDeps),
): LambdaHandler<RolloutResult | TerminalResult> {
  let resolved: RolloutDeps | undefined;
  const deps = () => (resolved ??= typeof input === 'function' ? input() : rolloutDeps(input));
  return observedHandler(
    'rollout',
    deps,
    async (d, event): Promise<RolloutResult> => {
      const detail = parseRolloutInput(event);
      d.logger.appendKeys({
        rolloutCommand: detail.command,
        ...('rolloutId' in detail && detail.rolloutId ? { rolloutId: detail.rolloutId } : {}),
      });
      return runRollout(d, detail);
    },
    rolloutTerminalReason,
  );
}

/**
 * A rollout command that can never succeed as sent: a spec that does not validate, a command the rollout's
 * phase does not allow, an id that does not exist or is taken by another spec. A lost version race
 * (RolloutConflictError) is not among them: the retry reads the new version.
 */
export function rolloutTerminalReason(err: unknown, event: unknown): TerminalReason | undefined {
  const inDetail = typeof event === 'object' && event !== null && 'detail' in event;
  const at = (field: string) => (inDetail ? `detail.${field}` : field);
  if (err instanceof RolloutSpecError)
    return { kind: 'invalid-event', field: at(`rollout.${err.field}`), message: err.message };
  if (err instanceof RolloutCommandError) return { kind: 'conflict', field: at('command'), message: err.message };
  if (err instanceof RolloutNotFoundError) return { kind: 'not-found', field: at('rolloutId'), message: err.message };
  if (err instanceof RolloutExistsError) return { kind: 'conflict', field: at('rollout.id'), message: err.message };
  return undefined;
}

/** The cloud handler: dependencies from the function's environment, built on the first invocation. */
export const handler = createRolloutHandler(() => rolloutDepsFromEnvironment());
