export { type Clock, FakeClock, systemClock } from './clock.ts';
export { DEFAULT_STATE_DIR, dlqFilePath, readDeadLetters } from './dlq-store.ts';
export { type CompiledPattern, compilePattern, InvalidPatternError, matches, testEventPattern } from './pattern.ts';
export {
  entrySize,
  MAX_ENTRIES_PER_CALL,
  MAX_ENTRIES_SIZE_BYTES,
  PutEventsCallError,
  type PutEventsRequestEntry,
  type PutEventsResult,
} from './put-events.ts';
export { InvalidRuleError } from './rules.ts';
export { loadRules, rulesFromServerlessConfig, ServerlessRulesError } from './rules-from-serverless.ts';
export { sanitizeError } from './sanitize.ts';
export { InvalidScheduleError, nextFireTime, parseSchedule, type Schedule } from './schedule.ts';
export { type LocalBus, type LocalBusOptions, startLocalBus } from './server.ts';
export type * from './types.ts';
