/**
 * Structural differences between the two backends' normalized answers, each at a path such as
 * `body.metadata.annotations` or `body.resources[name=pods].verbs`: arrays of named things are matched by
 * `name` (a managedFields entry by manager, operation and subresource, a condition by `type`), others by position; objects of different `kind` differ once, at `kind`;
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

type Key = (item: Json) => string | undefined;
const field =
  (k: string): Key =>
  (i) =>
    typeof i[k] === 'string' ? i[k] : undefined;
/** managedFields entries are one per manager, operation and subresource. */
const manager: Key = (i) =>
  typeof i.manager === 'string' ? [i.manager, i.operation, i.subresource].filter(Boolean).join('/') : undefined;
const KEYS: Array<[string, Key]> = [
  ['manager', manager],
  ['name', field('name')],
  ['type', field('type')],
];

function keyOf(items: unknown[]): [string, Key] | undefined {
  return KEYS.find(([, key]) => {
    const keys = items.map((i) => (isObject(i) ? key(i) : undefined));
    return items.length > 0 && keys.every((x) => x !== undefined) && new Set(keys).size === keys.length;
  });
}

export function diffValues(
  local: unknown,
  real: unknown,
  path: string,
  emit: (path: string, side: Difference['side'], local?: unknown, real?: unknown) => void,
): void {
  if (local === undefined && real === undefined) return;
  if (local === undefined) {
    emit(path, 'real-only', undefined, real);
    return;
  }
  if (real === undefined) {
    emit(path, 'local-only', local, undefined);
    return;
  }
  if (Array.isArray(local) && Array.isArray(real)) {
    const key = keyOf(local) ?? keyOf(real);
    if (key && (keyOf(local) === key || local.length === 0) && (keyOf(real) === key || real.length === 0)) {
      const byKey = (items: unknown[]) => new Map(items.map((i) => [key[1](i as Json)!, i]));
      const l = byKey(local);
      const r = byKey(real);
      for (const k of new Set([...l.keys(), ...r.keys()]))
        diffValues(l.get(k), r.get(k), `${path}[${key[0]}=${k}]`, emit);
      return;
    }
    for (let i = 0; i < Math.max(local.length, real.length); i++) diffValues(local[i], real[i], `${path}[${i}]`, emit);
    return;
  }
  if (isObject(local) && isObject(real)) {
    const kinds = [local.kind, real.kind];
    if (kinds.some((k) => typeof k === 'string') && kinds[0] !== kinds[1]) {
      emit(`${path}.kind`, 'both', local.kind, real.kind);
      return;
    }
    for (const k of new Set([...Object.keys(local), ...Object.keys(real)]))
      diffValues(local[k], real[k], `${path}.${k}`, emit);
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
  const emit = (path: string, side: Difference['side'], l?: unknown, r?: unknown) =>
    out.push({
      request,
      call,
      path,
      side,
      ...(l !== undefined ? { local: l } : {}),
      ...(r !== undefined ? { real: r } : {}),
    });
  if (local.status !== real.status) {
    emit('status', 'both', local.status, real.status);
    const reason = (a: Answer) => (isObject(a.body) ? { reason: a.body.reason, message: a.body.message } : undefined);
    diffValues(reason(local), reason(real), 'body', emit);
    return out;
  }
  if (mediaType(local.contentType) !== mediaType(real.contentType))
    emit('contentType', 'both', mediaType(local.contentType), mediaType(real.contentType));
  if (local.events || real.events) {
    // Events are a sequence: compared by position.
    const [l, r] = [local.events ?? [], real.events ?? []];
    for (let i = 0; i < Math.max(l.length, r.length); i++) diffValues(l[i], r[i], `events[${i}]`, emit);
  } else diffValues(local.body, real.body, 'body', emit);
  return out;
}
