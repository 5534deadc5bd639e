/** Progressive rollouts of a PoolSpirit spec change across the fleet: the pure state machine. */

export { applyCommand, RolloutCommandError } from './commands.ts';
export { newRolloutState, parseRolloutSpec, ROLLOUT_DEFAULTS, type RolloutSpecInput } from './create.ts';
export {
  clusterPhaseCounts,
  clustersToObserve,
  concurrencyLimit,
  decide,
  failureBudget,
  isChanged,
  isInFlight,
} from './decide.ts';
export { formatDuration, formatLimit, parseDuration, parseLimit, RolloutSpecError, resolveLimit } from './limits.ts';
export { type LivePoolSpirit, observePoolSpirit } from './observe.ts';
export {
  jsonEqual,
  mergePatch,
  projectOnto,
  specMatchesPatch,
  specMatchesSnapshot,
  validatePatch,
} from './spec-patch.ts';
export * from './types.ts';
