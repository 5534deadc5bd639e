/**
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), enough to validate them like the
 * API server does and to compare or convert them (`512Mi` → bytes for etcd's --quota-backend-bytes).
 */

/** The serialised-quantity grammar, as the API server's OpenAPI publishes it. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

const QUANTITY_RE = new RegExp(QUANTITY_PATTERN);

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

export type Quantity = string | number;

export function isQuantity(value: unknown): value is Quantity {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && QUANTITY_RE.test(value);
}

/** The numeric value of a quantity (`'1Gi'` → 1073741824, `'500m'` → 0.5). Throws on a malformed one. */
export function quantityValue(q: Quantity): number {
  if (typeof q === 'number') return q;
  if (!QUANTITY_RE.test(q)) throw new Error(`"${q}" is not a Kubernetes quantity`);
  const [, digits = '', suffix = ''] = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(.*)$/.exec(q) ?? [];
  const number = Number(digits);
  const unit = BINARY[suffix] ?? DECIMAL[suffix];
  if (unit !== undefined) return number * unit;
  return number * 10 ** Number(suffix.slice(1)); // decimal exponent: e3, E-2
}

/** Bytes as an integer, rounding up like the API server does for sub-unit memory quantities. */
export function quantityBytes(q: Quantity): number {
  return Math.ceil(quantityValue(q));
}

export function sameQuantity(a: Quantity, b: Quantity): boolean {
  if (!isQuantity(a) || !isQuantity(b)) return a === b;
  const x = quantityValue(a);
  const y = quantityValue(b);
  return x === y || Math.abs(x - y) <= Math.abs(x) * 1e-12;
}
