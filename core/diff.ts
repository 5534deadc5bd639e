import { isQuantity, sameQuantity } from './quantity.ts';

/**
 * Whether `live` has every field `desired` sets: fieldDiffs finds nothing. A converged pool asks this of the
 * same rendered objects (frozen and shared by the render memo, core/render/index.ts) and the same live
 * objects (a resourceVersion names one content of an object) on every pass, so the answer is remembered per
 * frozen desired value and live `version` (contentVersion). Without either it is worked out each time.
 */
export function covers(desired: unknown, live: unknown, version: string | undefined): boolean {
  const memo = version !== undefined && isFrozenObject(desired);
  const byVersion = memo ? coverage.get(desired) : undefined;
  const known = byVersion?.get(version as string);
  if (known !== undefined) return known;
  const answer = fieldDiffs(desired, live).length === 0;
  if (memo) {
    let versions = byVersion;
    if (!versions) {
      versions = new Map();
      coverage.set(desired, versions);
    }
    // A desired object is compared with few versions of its live object in its life; keep the latest few.
    if (versions.size >= COVERAGE_VERSIONS) versions.delete(versions.keys().next().value as string);
    versions.set(version as string, answer);
  }
  return answer;
}

const coverage = new WeakMap<object, Map<string, boolean>>();
const COVERAGE_VERSIONS = 8;

function isFrozenObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && Object.isFrozen(value);
}

/**
 * Whether a live object already has every field a desired object sets: the question server-side apply
 * would answer with "no change". The desired object is a partial view, so fields only the server or other
 * managers set (uid, resourceVersion, status, defaults such as imagePullPolicy) are ignored.
 *
 * - Zero values (false, 0, "", empty object or list) match a missing field: the API omits them on output.
 * - Quantities under requests/limits and sizeLimit compare by value ("1024Mi" is "1Gi").
 * - Lists must have the same length (so an element pool-spirit dropped is noticed). When every desired
 *   element has a `name` they are matched by name, like the API's map lists; otherwise by position.
 *
 * Returns the paths that differ (empty when the live object covers the desired one).
 */
export function fieldDiffs(desired: unknown, live: unknown, path = '', out: string[] = []): string[] {
  if (desired === undefined) return out;
  if (live === undefined || live === null) {
    if (!isZero(desired)) out.push(path || '/');
    return out;
  }
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) {
      out.push(path);
      return out;
    }
    const byName =
      desired.length > 0 && desired.every((e) => typeof (e as { name?: unknown } | null)?.name === 'string');
    desired.forEach((element, i) => {
      if (byName) {
        const name = (element as { name: string }).name;
        const match = live.find((l) => (l as { name?: unknown } | null)?.name === name);
        fieldDiffs(element, match, `${path}[name=${name}]`, out);
      } else {
        fieldDiffs(element, live[i], `${path}[${i}]`, out);
      }
    });
    return out;
  }
  if (desired !== null && typeof desired === 'object') {
    if (typeof live !== 'object' || Array.isArray(live)) {
      out.push(path);
      return out;
    }
    const quantities = path.endsWith('.requests') || path.endsWith('.limits');
    for (const [key, value] of Object.entries(desired)) {
      const liveValue = (live as Record<string, unknown>)[key];
      if ((quantities || key === 'sizeLimit') && isQuantity(value) && isQuantity(liveValue)) {
        if (!sameQuantity(value, liveValue)) out.push(`${path}.${key}`);
        continue;
      }
      fieldDiffs(value, liveValue, `${path}.${key}`, out);
    }
    return out;
  }
  if (desired !== live) out.push(path);
  return out;
}

function isZero(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as object).every((x) => x === undefined || isZero(x));
  return false;
}
