/** Progressive rollouts of a PoolSpirit spec change across the fleet: the pure state machine. */
export * from './types.ts';
export { parseLimit, resolveLimit, formatLimit, parseDuration, formatDuration, RolloutSpecError } from './limits.ts';
export {
  validatePatch,
  specMatchesPatch,
  specMatchesSnapshot,
  projectOnto,
  mergePatch,
  jsonEqual,
} from './spec-patch.ts';
export { parseRolloutSpec, newRolloutState, ROLLOUT_DEFAULTS, type RolloutSpecInput } from './create.ts';
export { decide, clustersToObserve, concurrencyLimit, failureBudget, isChanged, isInFlight } from './decide.ts';
export { applyCommand, RolloutCommandError } from './commands.ts';
export { observePoolSpirit, type LivePoolSpirit } from './observe.ts';
