/**
 * Fault rules of the proxy: which requests they hit (by verb, resource, namespace, name, field manager or
 * path) and what happens to them — a kube `Status` answer (409/429/500) instead of the backend's, a delay
 * before forwarding, a hang that answers nothing (a client timeout), or a watch dropped mid-stream.
 * Rules are tried in order; the first that matches and has uses left decides.
 */
import { type ApiError, conflict, internalError, tooManyRequests } from '../kube-api/server/errors.ts';
import type { KubeRequestInfo } from './request-info.ts';

export interface FaultMatch {
  /** Kube verbs (get, list, watch, create, update, patch, delete, deletecollection). */
  verbs?: string[];
  /** Plural resources, `pods/status` for a subresource. */
  resources?: string[];
  namespace?: string;
  name?: string;
  fieldManager?: string;
  /** Matched against the URL path (no query). */
  path?: RegExp;
}

export type FaultAction =
  | { status: 409 | 429 | 500; message?: string; retryAfterSeconds?: number }
  | { delayMs: number }
  /** No answer at all; the connection is closed after `hangMs` (or when the client or the proxy gives up). */
  | { hangMs: number }
  /** Forward, then cut the streamed response after `afterMs` or once `afterEvents` watch events have passed. */
  | { dropWatch: { afterMs?: number; afterEvents?: number } };

export interface FaultRule {
  match?: FaultMatch;
  action: FaultAction;
  /** How many requests the rule hits before it stops matching; unlimited when absent. */
  times?: number;
}

export class FaultRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultRuleError';
  }
}

const nonNegative = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

export function checkRules(rules: FaultRule[]): void {
  if (!Array.isArray(rules)) throw new FaultRuleError('fault rules: expected an array');
  rules.forEach((r, i) => {
    const where = `fault rule ${i + 1}`;
    const a = r?.action as Record<string, unknown> | undefined;
    if (!a || typeof a !== 'object') throw new FaultRuleError(`${where}: action is required`);
    if ('status' in a && ![409, 429, 500].includes(a.status as number))
      throw new FaultRuleError(`${where}: action.status must be 409, 429 or 500, got ${String(a.status)}`);
    for (const key of ['delayMs', 'hangMs', 'retryAfterSeconds'] as const) {
      if (key in a && !nonNegative(a[key]))
        throw new FaultRuleError(`${where}: action.${key} must be a non-negative number, got ${String(a[key])}`);
    }
    if ('dropWatch' in a) {
      const d = a.dropWatch as Record<string, unknown> | undefined;
      if (!d || (d.afterMs === undefined && d.afterEvents === undefined))
        throw new FaultRuleError(`${where}: action.dropWatch needs afterMs or afterEvents`);
      for (const key of ['afterMs', 'afterEvents'] as const) {
        if (d[key] !== undefined && !nonNegative(d[key]))
          throw new FaultRuleError(
            `${where}: action.dropWatch.${key} must be a non-negative number, got ${String(d[key])}`,
          );
      }
    }
    if (!['status', 'delayMs', 'hangMs', 'dropWatch'].some((k) => k in a))
      throw new FaultRuleError(`${where}: action must have one of status, delayMs, hangMs, dropWatch`);
    if (r.times !== undefined && !(Number.isInteger(r.times) && r.times >= 0))
      throw new FaultRuleError(`${where}: times must be a non-negative integer, got ${r.times}`);
  });
}

export interface RequestFacts extends KubeRequestInfo {
  path: string;
  fieldManager?: string;
}

function matches(m: FaultMatch | undefined, req: RequestFacts): boolean {
  if (!m) return true;
  const resource = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
  if (m.verbs && !m.verbs.includes(req.verb)) return false;
  if (m.resources && (resource === undefined || !m.resources.includes(resource))) return false;
  if (m.namespace !== undefined && m.namespace !== req.namespace) return false;
  if (m.name !== undefined && m.name !== req.name) return false;
  if (m.fieldManager !== undefined && m.fieldManager !== req.fieldManager) return false;
  if (m.path && !m.path.test(req.path)) return false;
  return true;
}

/** Holds the rules and how often each has fired. */
export class FaultPlan {
  private rules: FaultRule[] = [];
  private used: number[] = [];

  constructor(rules: FaultRule[] = []) {
    this.set(rules);
  }

  set(rules: FaultRule[]): void {
    checkRules(rules);
    this.rules = rules;
    this.used = rules.map(() => 0);
  }

  /** The action for this request, counting one use of its rule; undefined when no rule hits. */
  take(req: RequestFacts): FaultAction | undefined {
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      if (rule.times !== undefined && this.used[i]! >= rule.times) continue;
      if (!matches(rule.match, req)) continue;
      this.used[i]!++;
      return rule.action;
    }
    return undefined;
  }
}

/** The `Status` kube-apiserver would send for this injected failure, with its headers. */
export function injectedStatus(
  action: { status: 409 | 429 | 500; message?: string; retryAfterSeconds?: number },
  req: RequestFacts,
): ApiError {
  const gr = { group: req.group ?? '', resource: req.resource ?? '' };
  switch (action.status) {
    case 409:
      return conflict(
        gr,
        req.name ?? '',
        action.message ?? 'the object has been modified; please apply your changes to the latest version and try again',
      );
    case 429:
      return tooManyRequests(action.retryAfterSeconds ?? 1);
    case 500:
      return internalError(new Error(action.message ?? 'injected fault'));
  }
}

export function describeAction(a: FaultAction): string {
  if ('status' in a) return `status ${a.status}`;
  if ('delayMs' in a) return `delay ${a.delayMs}ms`;
  if ('hangMs' in a) return `hang ${a.hangMs}ms`;
  return `drop watch${a.dropWatch.afterEvents !== undefined ? ` after ${a.dropWatch.afterEvents} events` : ''}${a.dropWatch.afterMs !== undefined ? ` after ${a.dropWatch.afterMs}ms` : ''}`;
}
