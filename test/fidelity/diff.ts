/**
 * Structural differences between the two backends' normalized answers, each at a path such as
 * `body.metadata.annotations` or `body.resources[name=pods].verbs`: arrays of named things are matched by
 * `name` (or a condition's `type`), others by position; objects of different `kind` differ once, at `kind`;
 * answers with different status codes differ in status and in the Status' reason and message only.
 */

export interface Difference {
  /** The corpus request, `<case>#<n>`. */
  request: string;
  /** `METHOD /path?query` as replayed. */
  call: string;
  path: string;
  /** Which side has a value: both (they differ), or only one. */
  side: 'both' | 'local-only' | 'real-only';
  local?: unknown;
  real?: unknown;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function keyOf(items: unknown[]): 'name' | 'type' | undefined {
  for (const k of ['name', 'type'] as const) {
    const keys = items.map((i) => (isObject(i) && typeof i[k] === 'string' ? i[k] : undefined));
    if (items.length > 0 && keys.every((x) => x !== undefined) && new Set(keys).size === keys.length) return k;
  }
  return undefined;
}

export function diffValues(local: unknown, real: unknown, path: string, emit: (path: string, side: Difference['side'], local?: unknown, real?: unknown) => void): void {
  if (local === undefined && real === undefined) return;
  if (local === undefined) return emit(path, 'real-only', undefined, real);
  if (real === undefined) return emit(path, 'local-only', local, undefined);
  if (Array.isArray(local) && Array.isArray(real)) {
    const key = keyOf(local) ?? keyOf(real);
    if (key && (keyOf(local) === key || local.length === 0) && (keyOf(real) === key || real.length === 0)) {
      const byKey = (items: unknown[]) => new Map(items.map((i) => [String((i as Json)[key]), i]));
      const l = byKey(local);
      const r = byKey(real);
      for (const k of new Set([...l.keys(), ...r.keys()])) diffValues(l.get(k), r.get(k), `${path}[${key}=${k}]`, emit);
      return;
    }
    for (let i = 0; i < Math.max(local.length, real.length); i++) diffValues(local[i], real[i], `${path}[${i}]`, emit);
    return;
  }
  if (isObject(local) && isObject(real)) {
    const kinds = [local.kind, real.kind];
    if (kinds.some((k) => typeof k === 'string') && kinds[0] !== kinds[1]) return emit(`${path}.kind`, 'both', local.kind, real.kind);
    for (const k of new Set([...Object.keys(local), ...Object.keys(real)])) diffValues(local[k], real[k], `${path}.${k}`, emit);
    return;
  }
  if (JSON.stringify(local) !== JSON.stringify(real)) emit(path, 'both', local, real);
}

export interface Answer {
  status: number;
  contentType: string;
  body: unknown;
  events?: unknown[];
}

const mediaType = (ct: string) => ct.split(';')[0]!.trim();

export function diffAnswers(request: string, call: string, local: Answer, real: Answer): Difference[] {
  const out: Difference[] = [];
  const emit = (path: string, side: Difference['side'], l?: unknown, r?: unknown) => out.push({ request, call, path, side, ...(l !== undefined ? { local: l } : {}), ...(r !== undefined ? { real: r } : {}) });
  if (local.status !== real.status) {
    emit('status', 'both', local.status, real.status);
    const reason = (a: Answer) => (isObject(a.body) ? { reason: a.body.reason, message: a.body.message } : undefined);
    diffValues(reason(local), reason(real), 'body', emit);
    return out;
  }
  if (mediaType(local.contentType) !== mediaType(real.contentType)) emit('contentType', 'both', mediaType(local.contentType), mediaType(real.contentType));
  if (local.events || real.events) diffValues(local.events ?? [], real.events ?? [], 'events', emit);
  else diffValues(local.body, real.body, 'body', emit);
  return out;
}
