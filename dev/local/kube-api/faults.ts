/**
 * Fault injection for reliability tests: per verb and resource, a rate of 429/500 answers, added latency
 * and watch connections dropped after a while. Decisions come from a seeded PRNG so a failing run can be
 * replayed exactly with the same seed and the same request order.
 */

export interface FaultRule {
  /** Kube verbs (get, list, watch, create, update, patch, delete, deletecollection); absent or `*` = all. */
  verbs?: string[];
  /** Plural resources, optionally with subresource (`pods/status`); absent or `*` = all. */
  resources?: string[];
  /** Probability in [0, 1] that a matching request fails. */
  errorRate?: number;
  /** 409 answers as a write that lost a race (a Conflict on the object), as kube-apiserver sends under contention. */
  errorStatus?: 409 | 429 | 500;
  latencyMs?: number;
  watchDropAfterMs?: number;
}

export interface FaultConfig {
  seed?: number;
  rules: FaultRule[];
}

export interface FaultDecision {
  delayMs: number;
  failStatus?: 409 | 429 | 500;
  dropWatchAfterMs?: number;
}

export interface FaultInjector {
  decide(verb: string, resource: string): FaultDecision;
  setConfig(cfg: FaultConfig): void;
}

export class FaultSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultSpecError';
  }
}

/** mulberry32: tiny, fast, and good enough to spread fault decisions evenly. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KNOWN_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', '*'];

function validateConfig(cfg: FaultConfig): void {
  if (!cfg || !Array.isArray(cfg.rules)) throw new FaultSpecError('fault config: "rules" must be an array of rules');
  cfg.rules.forEach((r, i) => {
    const where = `fault rule ${i + 1}`;
    for (const v of r.verbs ?? []) {
      if (!KNOWN_VERBS.includes(v))
        throw new FaultSpecError(`${where}: unknown verb "${v}" (expected one of ${KNOWN_VERBS.join(', ')})`);
    }
    if (r.errorRate !== undefined && !(r.errorRate >= 0 && r.errorRate <= 1)) {
      throw new FaultSpecError(`${where}: errorRate must be a number between 0 and 1, got ${r.errorRate}`);
    }
    if (r.errorStatus !== undefined && r.errorStatus !== 409 && r.errorStatus !== 429 && r.errorStatus !== 500) {
      throw new FaultSpecError(`${where}: errorStatus must be 409, 429 or 500, got ${r.errorStatus}`);
    }
    for (const key of ['latencyMs', 'watchDropAfterMs'] as const) {
      const v = r[key];
      if (v !== undefined && !(Number.isFinite(v) && v >= 0))
        throw new FaultSpecError(`${where}: ${key} must be a non-negative number of milliseconds, got ${v}`);
    }
  });
}

function listMatches(list: string[] | undefined, value: string): boolean {
  return !list || list.length === 0 || list.includes('*') || list.includes(value);
}

function ruleMatches(rule: FaultRule, verb: string, resource: string): boolean {
  // A rule for `pods` covers `pods/status` too; a rule for `pods/status` only the subresource.
  const [base = resource] = resource.split('/');
  return listMatches(rule.verbs, verb) && (listMatches(rule.resources, resource) || listMatches(rule.resources, base));
}

/**
 * Every matching rule contributes: the largest latency, the shortest watch-drop delay, and an independent
 * failure roll each (the first failing roll decides the status). No config = no faults.
 */
export function createFaultInjector(cfg?: FaultConfig): FaultInjector {
  let config: FaultConfig = { rules: [] };
  let random = prng(0);
  const setConfig = (next: FaultConfig) => {
    validateConfig(next);
    config = next;
    random = prng(next.seed ?? Math.floor(Math.random() * 2 ** 32));
  };
  if (cfg) setConfig(cfg);
  return {
    setConfig,
    decide(verb, resource) {
      const decision: FaultDecision = { delayMs: 0 };
      for (const rule of config.rules) {
        if (!ruleMatches(rule, verb, resource)) continue;
        decision.delayMs = Math.max(decision.delayMs, rule.latencyMs ?? 0);
        if (verb === 'watch' && rule.watchDropAfterMs !== undefined) {
          decision.dropWatchAfterMs = Math.min(decision.dropWatchAfterMs ?? Infinity, rule.watchDropAfterMs);
        }
        if (rule.errorRate && random() < rule.errorRate && decision.failStatus === undefined) {
          decision.failStatus = rule.errorStatus ?? 500;
        }
      }
      return decision;
    },
  };
}

function parseDurationMs(text: string, where: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new FaultSpecError(`${where}: expected a duration like 20ms, 1.5s or 2m, got "${text}"`);
  const n = Number(m[1]);
  return m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n;
}

function parseRate(text: string, where: string): number {
  const t = text.trim();
  const n = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (t === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new FaultSpecError(`${where}: expected an error rate between 0 and 1 (or 0%..100%), got "${text}"`);
  }
  return n;
}

const SPEC_KEYS = 'verbs, resources, error, latency, watchdrop';

/**
 * Parses the CLI/env form. Rules are separated by `|`, a rule's settings by `;`; a `seed=N` segment sets
 * the seed. Example: `seed=7|verbs=create,update;resources=pods;error=0.1:429;latency=20ms|watchdrop=5s`.
 */
export function parseFaultSpec(text: string): FaultConfig {
  const cfg: FaultConfig = { rules: [] };
  const segments = text
    .split('|')
    .map((s) => s.trim())
    .filter(Boolean);
  if (segments.length === 0)
    throw new FaultSpecError('fault spec is empty: expected rules like "verbs=create;error=0.1:429"');
  let ruleNo = 0;
  for (const segment of segments) {
    const seed = /^seed=(.*)$/.exec(segment);
    if (seed) {
      const n = Number(seed[1]);
      if (!Number.isInteger(n) || n < 0)
        throw new FaultSpecError(`fault spec: seed must be a non-negative integer, got "${seed[1]}"`);
      cfg.seed = n;
      continue;
    }
    ruleNo++;
    const rule: FaultRule = {};
    for (const setting of segment
      .split(';')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = setting.indexOf('=');
      const key = (eq < 0 ? setting : setting.slice(0, eq)).trim().toLowerCase();
      const value = eq < 0 ? '' : setting.slice(eq + 1).trim();
      const where = `fault spec rule ${ruleNo}, ${key}`;
      if (eq < 0 || value === '')
        throw new FaultSpecError(
          `fault spec rule ${ruleNo}: "${setting}" needs a value (key=value; keys: ${SPEC_KEYS})`,
        );
      switch (key) {
        case 'verbs':
          rule.verbs = value.split(',').map((v) => v.trim().toLowerCase());
          break;
        case 'resources':
          rule.resources = value.split(',').map((v) => v.trim());
          break;
        case 'error': {
          const [rate = '', status] = value.split(':');
          rule.errorRate = parseRate(rate, where);
          if (status !== undefined) {
            if (status !== '409' && status !== '429' && status !== '500')
              throw new FaultSpecError(`${where}: status must be 409, 429 or 500, got "${status}"`);
            rule.errorStatus = Number(status) as 409 | 429 | 500;
          }
          break;
        }
        case 'latency':
          rule.latencyMs = parseDurationMs(value, where);
          break;
        case 'watchdrop':
          rule.watchDropAfterMs = parseDurationMs(value, where);
          break;
        default:
          throw new FaultSpecError(
            `fault spec rule ${ruleNo}: unknown key "${key}" (expected ${SPEC_KEYS}, or a "seed=N" segment)`,
          );
      }
    }
    cfg.rules.push(rule);
  }
  validateConfig(cfg);
  return cfg;
}
