export { startLocalBus, type LocalBus, type LocalBusOptions } from './server.ts';
export { compilePattern, matches, testEventPattern, InvalidPatternError, type CompiledPattern } from './pattern.ts';
export { parseSchedule, nextFireTime, InvalidScheduleError, type Schedule } from './schedule.ts';
export { FakeClock, systemClock, type Clock } from './clock.ts';
export { readDeadLetters, dlqFilePath, DEFAULT_STATE_DIR } from './dlq-store.ts';
export {
  PutEventsCallError,
  MAX_ENTRIES_PER_CALL,
  MAX_ENTRIES_SIZE_BYTES,
  entrySize,
  type PutEventsRequestEntry,
  type PutEventsResult,
} from './put-events.ts';
export { InvalidRuleError } from './rules.ts';
export { sanitizeError } from './sanitize.ts';
export type * from './types.ts';
export { loadRules, rulesFromServerlessConfig, ServerlessRulesError } from './rules-from-serverless.ts';
