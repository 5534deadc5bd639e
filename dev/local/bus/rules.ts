import { DEFAULT_EVENT_BUS } from '../../../events/source.ts';
import type { ResolvedRule } from './delivery.ts';
import { compilePattern, InvalidPatternError } from './pattern.ts';
import { busNameOf } from './put-events.ts';
import { InvalidScheduleError, parseSchedule } from './schedule.ts';
import type { Rule, TargetFn } from './types.ts';

/** Retry policy bounds and defaults of an EventBridge rule target. */
export const RETRY_ATTEMPTS_MAX = 185;
export const EVENT_AGE_MIN_SECONDS = 60;
export const EVENT_AGE_MAX_SECONDS = 86_400;

export class InvalidRuleError extends Error {
  constructor(rule: string, reason: string) {
    super(`rule "${rule}": ${reason}`);
    this.name = 'InvalidRuleError';
  }
}

function wholeNumberIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** Validates rules against EventBridge's rules and the registered targets; fills in defaults. */
export function resolveRules(rules: Rule[], targets: Record<string, TargetFn>): ResolvedRule[] {
  const seen = new Set<string>();
  return rules.map((rule, index) => {
    const label = typeof rule?.name === 'string' && rule.name ? rule.name : `#${index}`;
    const fail = (reason: string): never => {
      throw new InvalidRuleError(label, reason);
    };
    if (typeof rule?.name !== 'string' || !/^[.\-_A-Za-z0-9]{1,64}$/.test(rule.name)) {
      fail('name must be 1-64 characters of letters, digits, ".", "-" or "_"');
    }
    const eventBus = busNameOf(rule.eventBus ?? DEFAULT_EVENT_BUS);
    const key = `${eventBus}/${rule.name}`;
    if (seen.has(key)) fail(`another rule on bus "${eventBus}" has the same name`);
    seen.add(key);
    if (rule.pattern === undefined && rule.schedule === undefined) fail('needs an event pattern, a schedule, or both');
    if (typeof rule.target !== 'string' || !targets[rule.target]) {
      fail(
        `target "${String(rule.target)}" is not one of the registered targets (${Object.keys(targets).join(', ') || 'none'})`,
      );
    }
    let compiled = null;
    if (rule.pattern !== undefined) {
      try {
        compiled = compilePattern(rule.pattern);
      } catch (err) {
        if (err instanceof InvalidPatternError) fail(err.message);
        throw err;
      }
    }
    let schedule = null;
    if (rule.schedule !== undefined) {
      if (eventBus !== DEFAULT_EVENT_BUS)
        fail(`schedule rules can only be on the default event bus, not "${eventBus}"`);
      try {
        schedule = parseSchedule(rule.schedule);
      } catch (err) {
        if (err instanceof InvalidScheduleError) fail(err.message);
        throw err;
      }
    }
    const policy = rule.retryPolicy ?? {};
    const attempts = policy.maximumRetryAttempts ?? RETRY_ATTEMPTS_MAX;
    if (!wholeNumberIn(attempts, 0, RETRY_ATTEMPTS_MAX))
      fail(
        `retryPolicy.maximumRetryAttempts must be a whole number from 0 to ${RETRY_ATTEMPTS_MAX}, got ${JSON.stringify(attempts)}`,
      );
    const age = policy.maximumEventAgeInSeconds ?? EVENT_AGE_MAX_SECONDS;
    if (!wholeNumberIn(age, EVENT_AGE_MIN_SECONDS, EVENT_AGE_MAX_SECONDS)) {
      fail(
        `retryPolicy.maximumEventAgeInSeconds must be a whole number from ${EVENT_AGE_MIN_SECONDS} to ${EVENT_AGE_MAX_SECONDS}, got ${JSON.stringify(age)}`,
      );
    }
    if (
      rule.inputPath !== undefined &&
      (typeof rule.inputPath !== 'string' || !/^\$(\.[^.\s]+)*$/.test(rule.inputPath))
    ) {
      fail(`inputPath must be a simple JSON path such as $.detail, got ${JSON.stringify(rule.inputPath)}`);
    }
    if (rule.input !== undefined && rule.inputPath !== undefined) fail('input and inputPath cannot both be set');
    return {
      name: rule.name,
      eventBus,
      target: rule.target,
      compiled,
      schedule,
      input: rule.input,
      inputPath: rule.inputPath ?? null,
      maximumRetryAttempts: attempts,
      maximumEventAgeMs: age * 1000,
      deadLetterQueueArn: rule.deadLetterQueueArn ?? null,
      enabled: rule.enabled ?? true,
    };
  });
}
