import { readFileSync } from 'node:fs';
import { DEFAULT_EVENT_BUS } from '../../../events/source.ts';
import { compilePattern, InvalidPatternError } from './pattern.ts';
import { busNameOf } from './put-events.ts';
import { EVENT_AGE_MAX_SECONDS, EVENT_AGE_MIN_SECONDS, RETRY_ATTEMPTS_MAX } from './rules.ts';
import { InvalidScheduleError, parseSchedule } from './schedule.ts';
import {
  parseServerlessYaml,
  type ResolveOptions,
  UnresolvedVariableError,
  VariableResolver,
} from './serverless-config.ts';
import type { Rule } from './types.ts';

/**
 * Reads the routing of serverless.yml (osls / Serverless Framework v3 syntax) as local bus rules, so the
 * local stack routes exactly as the cloud does:
 *
 *   functions.<fn>.events[]:
 *     - eventBridge: { eventBus, pattern, schedule, retryPolicy { maximumEventAge, maximumRetryAttempts },
 *                      deadLetterQueueArn, input, inputPath, enabled }
 *     - schedule: rate(5 minutes) | { rate: <expr> | [<expr>, ...], input, inputPath, enabled }
 *
 * Every pattern and schedule is validated here; an error names the function and the event.
 */

export class ServerlessRulesError extends Error {
  constructor(where: string, reason: string) {
    super(`${where}: ${reason}`);
    this.name = 'ServerlessRulesError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function loadRules(serverlessYmlPath: string, options: ResolveOptions = {}): Rule[] {
  let text: string;
  try {
    text = readFileSync(serverlessYmlPath, 'utf8');
  } catch (err) {
    throw new ServerlessRulesError(serverlessYmlPath, `cannot read: ${(err as Error).message}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parseServerlessYaml(text);
  } catch (err) {
    throw new ServerlessRulesError(serverlessYmlPath, `not valid YAML: ${(err as Error).message}`);
  }
  return rulesFromServerlessConfig(doc, options, serverlessYmlPath);
}

export function rulesFromServerlessConfig(
  doc: Record<string, unknown>,
  options: ResolveOptions = {},
  file = 'serverless.yml',
): Rule[] {
  const vars = new VariableResolver(doc, options);
  const functions = doc.functions;
  if (functions === undefined) return [];
  if (!isObject(functions))
    throw new ServerlessRulesError(`${file}: functions`, 'must be a mapping of function name to definition');
  const rules: Rule[] = [];
  for (const [fnName, fn] of Object.entries(functions)) {
    if (!isObject(fn) || fn.events === undefined) continue;
    if (!Array.isArray(fn.events))
      throw new ServerlessRulesError(`${file}: functions.${fnName}.events`, 'must be a list');
    fn.events.forEach((ev, i) => {
      const where = `${file}: functions.${fnName}.events[${i}]`;
      if (!isObject(ev)) return;
      try {
        if (ev.eventBridge !== undefined) rules.push(...eventBridgeRules(vars, fnName, i, ev.eventBridge, where));
        if (ev.schedule !== undefined) rules.push(...scheduleRules(vars, fnName, i, ev.schedule, where));
      } catch (err) {
        if (err instanceof ServerlessRulesError) throw err;
        throw new ServerlessRulesError(where, (err as Error).message);
      }
    });
  }
  return rules;
}

function ruleName(fnName: string, kind: string, index: number, n?: number): string {
  // EventBridge rule names: at most 64 characters of [.-_A-Za-z0-9].
  const base = `${fnName}-${kind}-${index + 1}${n === undefined ? '' : `-${n + 1}`}`.replace(/[^.\-_A-Za-z0-9]/g, '_');
  return base.slice(0, 64);
}

function eventBridgeRules(vars: VariableResolver, fnName: string, index: number, raw: unknown, where: string): Rule[] {
  if (!isObject(raw)) throw new ServerlessRulesError(`${where}.eventBridge`, 'must be a mapping');
  const eb = raw;
  const eventBus = resolveEventBus(vars, eb.eventBus, `${where}.eventBridge.eventBus`);
  const common = targetSettings(vars, eb, `${where}.eventBridge`);
  const rules: Rule[] = [];
  if (eb.pattern !== undefined) {
    const pattern = resolveOrFail(vars, eb.pattern, `${where}.eventBridge.pattern`);
    try {
      compilePattern(pattern);
    } catch (err) {
      if (err instanceof InvalidPatternError)
        throw new ServerlessRulesError(`${where}.eventBridge.pattern`, `function ${fnName}: ${err.message}`);
      throw err;
    }
    rules.push({ name: ruleName(fnName, 'rule', index), eventBus, pattern, target: fnName, ...common });
  }
  if (eb.schedule !== undefined) {
    const expr = resolveOrFail(vars, eb.schedule, `${where}.eventBridge.schedule`);
    checkSchedule(expr, fnName, `${where}.eventBridge.schedule`);
    if (eventBus !== DEFAULT_EVENT_BUS)
      throw new ServerlessRulesError(
        `${where}.eventBridge`,
        `a schedule can only be on the default bus, not ${eventBus}`,
      );
    rules.push({
      name: ruleName(fnName, 'schedule', index),
      eventBus,
      schedule: expr as string,
      target: fnName,
      ...common,
    });
  }
  if (rules.length === 0)
    throw new ServerlessRulesError(`${where}.eventBridge`, `function ${fnName}: needs a pattern or a schedule`);
  return rules;
}

function scheduleRules(vars: VariableResolver, fnName: string, index: number, raw: unknown, where: string): Rule[] {
  const value = resolveOrFail(vars, raw, `${where}.schedule`);
  const settings = isObject(value) ? value : { rate: value };
  const rates = Array.isArray(settings.rate) ? settings.rate : [settings.rate];
  if (rates.length === 0 || settings.rate === undefined)
    throw new ServerlessRulesError(`${where}.schedule`, `function ${fnName}: rate is required`);
  const common = targetSettings(vars, settings, `${where}.schedule`);
  return rates.map((expr, n) => {
    checkSchedule(expr, fnName, `${where}.schedule.rate${rates.length > 1 ? `[${n}]` : ''}`);
    return {
      name: ruleName(fnName, 'schedule', index, rates.length > 1 ? n : undefined),
      eventBus: DEFAULT_EVENT_BUS,
      schedule: expr as string,
      target: fnName,
      ...common,
    };
  });
}

function checkSchedule(expr: unknown, fnName: string, where: string): void {
  if (typeof expr !== 'string')
    throw new ServerlessRulesError(
      where,
      `function ${fnName}: a schedule is a string such as rate(5 minutes), got ${JSON.stringify(expr)}`,
    );
  try {
    parseSchedule(expr);
  } catch (err) {
    if (err instanceof InvalidScheduleError)
      throw new ServerlessRulesError(where, `function ${fnName}: ${err.message}`);
    throw err;
  }
}

function resolveOrFail(vars: VariableResolver, value: unknown, where: string): unknown {
  try {
    return vars.resolve(value);
  } catch (err) {
    if (err instanceof UnresolvedVariableError) throw new ServerlessRulesError(where, err.message);
    throw err;
  }
}

function resolveEventBus(vars: VariableResolver, raw: unknown, where: string): string {
  if (raw === undefined) return DEFAULT_EVENT_BUS;
  const resolved = resolveOrFail(vars, raw, where);
  const name = vars.cfnValue(resolved);
  if (!name)
    throw new ServerlessRulesError(
      where,
      `cannot tell which event bus ${JSON.stringify(raw)} names (use a name, an ARN, or !Ref/!GetAtt of an AWS::Events::EventBus in resources)`,
    );
  return busNameOf(name);
}

/** Retry policy, dead-letter queue, input shaping and enabled flag shared by both event kinds. */
function targetSettings(vars: VariableResolver, settings: Record<string, unknown>, where: string): Partial<Rule> {
  const out: Partial<Rule> = {};
  if (settings.retryPolicy !== undefined) {
    const policy = resolveOrFail(vars, settings.retryPolicy, `${where}.retryPolicy`);
    if (!isObject(policy)) throw new ServerlessRulesError(`${where}.retryPolicy`, 'must be a mapping');
    const attempts = policy.maximumRetryAttempts;
    const age = policy.maximumEventAge;
    if (
      attempts !== undefined &&
      !(Number.isInteger(attempts) && (attempts as number) >= 0 && (attempts as number) <= RETRY_ATTEMPTS_MAX)
    ) {
      throw new ServerlessRulesError(
        `${where}.retryPolicy.maximumRetryAttempts`,
        `must be a whole number from 0 to ${RETRY_ATTEMPTS_MAX}, got ${JSON.stringify(attempts)}`,
      );
    }
    if (
      age !== undefined &&
      !(Number.isInteger(age) && (age as number) >= EVENT_AGE_MIN_SECONDS && (age as number) <= EVENT_AGE_MAX_SECONDS)
    ) {
      throw new ServerlessRulesError(
        `${where}.retryPolicy.maximumEventAge`,
        `must be a whole number of seconds from ${EVENT_AGE_MIN_SECONDS} to ${EVENT_AGE_MAX_SECONDS}, got ${JSON.stringify(age)}`,
      );
    }
    out.retryPolicy = {
      ...(attempts !== undefined ? { maximumRetryAttempts: attempts as number } : {}),
      ...(age !== undefined ? { maximumEventAgeInSeconds: age as number } : {}),
    };
  }
  if (settings.deadLetterQueueArn !== undefined) {
    const arn = vars.cfnValue(resolveOrFail(vars, settings.deadLetterQueueArn, `${where}.deadLetterQueueArn`));
    out.deadLetterQueueArn = arn ?? JSON.stringify(settings.deadLetterQueueArn);
  }
  if (settings.input !== undefined) {
    const input = resolveOrFail(vars, settings.input, `${where}.input`);
    // CloudFormation takes Input as JSON text; Serverless stringifies mappings and passes strings through.
    out.input = typeof input === 'string' ? parseJsonOr(input) : input;
  }
  if (settings.inputPath !== undefined)
    out.inputPath = resolveOrFail(vars, settings.inputPath, `${where}.inputPath`) as string;
  if (settings.inputTransformer !== undefined) {
    throw new ServerlessRulesError(
      `${where}.inputTransformer`,
      'inputTransformer is not supported by the local bus; use input or inputPath',
    );
  }
  if (settings.enabled !== undefined) out.enabled = resolveOrFail(vars, settings.enabled, `${where}.enabled`) !== false;
  return out;
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
