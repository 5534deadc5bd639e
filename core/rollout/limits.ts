/** Parsing and resolving the rollout's numeric controls: `N` / `N%` limits and `1h30m` durations. */
import type { Limit } from './types.ts';

export class RolloutSpecError extends TypeError {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'RolloutSpecError';
    this.field = field;
  }
}

/** `3` → {count: 3}; `25%` → {percent: 25}. */
export function parseLimit(field: string, raw: string | number, min = 0): Limit {
  const text = String(raw).trim();
  const pct = /^(\d{1,3})%$/.exec(text);
  if (pct) {
    const percent = Number(pct[1]);
    if (percent > 100 || percent < (min > 0 ? 1 : 0))
      throw new RolloutSpecError(field, `expected a percentage from ${min > 0 ? 1 : 0}% to 100%, got "${text}"`);
    return { percent };
  }
  if (!/^\d{1,6}$/.test(text) || Number(text) < min) {
    throw new RolloutSpecError(field, `expected a whole number ≥ ${min} or a percentage such as 25%, got "${text}"`);
  }
  return { count: Number(text) };
}

/**
 * A limit as a number of clusters out of `total`. Concurrency rounds up and is at least 1 (25% of 3
 * clusters still moves one); the failure budget rounds down (10% of 5 clusters tolerates none).
 */
export function resolveLimit(limit: Limit, total: number, rounding: 'up' | 'down'): number {
  if ('count' in limit) return limit.count;
  const exact = (limit.percent * total) / 100;
  return rounding === 'up' ? Math.max(1, Math.ceil(exact)) : Math.floor(exact);
}

export function formatLimit(limit: Limit): string {
  return 'count' in limit ? String(limit.count) : `${limit.percent}%`;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `5m`, `1h30m`, `500ms` (Go-style, as kubectl writes them) → milliseconds. */
export function parseDuration(field: string, raw: string | number): number {
  if (typeof raw === 'number') {
    if (!(raw >= 0) || !Number.isFinite(raw))
      throw new RolloutSpecError(field, `expected a non-negative duration, got ${raw}`);
    return raw;
  }
  const text = raw.trim();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]; // the pattern admits only these units
    matched = re.lastIndex;
  }
  if (text === '0') return 0;
  if (matched === 0 || matched !== text.length) {
    throw new RolloutSpecError(field, `expected a duration such as 90s, 5m or 1h30m, got "${text}"`);
  }
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest) parts.push(`${rest}ms`);
  return parts.join('');
}
