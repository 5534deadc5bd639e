/**
 * Value validation and pruning against a structural schema, as kube-apiserver does for custom resources:
 * unknown fields are pruned (and reported as field paths for strict/warn field validation), then the
 * remaining value is checked the way k8s.io/kube-openapi's validator checks it, with its causes mapped
 * to field errors exactly like apiextensions-apiserver's kubeOpenAPIResultToFieldErrors does.
 *
 * Two path spellings exist upstream and both are kept: kube-openapi names values `spec.items[0].name`
 * with map keys joined by dots (`spec.labels.app`), while pruning and list/embedded checks use
 * field.Path, which writes map keys in brackets (`spec.labels[app]`).
 */
import { builtinSchema, isBuiltinSchema } from './builtin.ts';
import { duplicate, goNumber, invalid, notSupported, required, tooLong, tooMany, typeInvalid } from './field-errors.ts';
import { validateFormat } from './formats.ts';
import type { SchemaNode, StatusCause } from './types.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface SchemaValidationResult {
  causes: StatusCause[];
  /** Paths of pruned unknown fields (`spec.foo`, `spec.containers[0].bar`); empty under Ignore. */
  unknownFields: string[];
  /**
   * The object as kube would store it: unknown fields pruned, non-nullable nulls dropped and schema
   * defaults applied (custom resources only; built-in schemas carry no defaults).
   */
  pruned: Record<string, unknown>;
}

/**
 * Where a value is, named only when a message needs it: every key of every write gets a location, and
 * building both strings for each was a large share of the validator's allocation.
 */
class Location {
  private cachedName: string | undefined;
  private cachedPath: string | undefined;
  private readonly parent: Location | undefined;
  private readonly step: 'property' | 'mapKey' | 'index';
  private readonly key: string;

  constructor(parent: Location | undefined, step: 'property' | 'mapKey' | 'index', key: string) {
    this.parent = parent;
    this.step = step;
    this.key = key;
  }

  /** kube-openapi's name of the value, used in messages and as the cause's field. */
  get name(): string {
    this.cachedName ??= this.render((up) => up.name, this.step === 'index');
    return this.cachedName;
  }

  /** field.Path rendering, used for unknown fields and list/embedded-resource errors. */
  get path(): string {
    this.cachedPath ??= this.render((up) => up.path, this.step !== 'property');
    return this.cachedPath;
  }

  /** `parent[key]` when bracketed, else `parent.key` (just `key` under an unnamed parent). */
  private render(of: (up: Location) => string, bracketed: boolean): string {
    if (!this.parent) return '';
    const up = of(this.parent);
    if (bracketed) return `${up}[${this.key}]`;
    return up ? `${up}.${this.key}` : this.key;
  }
}

interface Collector {
  causes: StatusCause[];
  unknown: string[];
  /** Validating a built-in kind: only the checks its Go decoding and validation would also make. */
  builtin: boolean;
}

interface Mode {
  /** At a resource's root or an embedded resource: apiVersion, kind and metadata are implied. */
  resource: boolean;
  /** Decoded by Go structs upstream (built-in kinds, any resource's metadata): null means zero value. */
  goDecoded: boolean;
}

const ROOT = new Location(undefined, 'property', '');

export function validateAgainstSchema(
  obj: object,
  schema: SchemaNode,
  opts: { fieldValidation: FieldValidation },
): SchemaValidationResult {
  const ctx: Collector = { causes: [], unknown: [], builtin: isBuiltinSchema(schema) };
  const pruned = walk(obj, schema, ROOT, ctx, { resource: true, goDecoded: ctx.builtin }) as Record<string, unknown>;
  return { causes: ctx.causes, unknownFields: opts.fieldValidation === 'Ignore' ? [] : ctx.unknown, pruned };
}

function walk(value: unknown, s: SchemaNode, loc: Location, ctx: Collector, mode: Mode): unknown {
  if (value === null || value === undefined) {
    if (!mode.goDecoded && !s.nullable && (s.type || s['x-kubernetes-int-or-string'])) {
      ctx.causes.push(typeInvalid(loc.name, 'null', `${loc.name} in body must be of type ${typeName(s)}: "null"`));
    }
    return null;
  }
  const actual = jsonType(value);
  if (!typeMatches(s, actual)) {
    ctx.causes.push(typeInvalid(loc.name, actual, `${loc.name} in body must be of type ${typeName(s)}: "${actual}"`));
    return value;
  }
  let out = value;
  if (actual === 'object') out = walkObject(value as Record<string, unknown>, s, loc, ctx, mode);
  else if (actual === 'array') out = walkArray(value as unknown[], s, loc, ctx, mode);
  else if (actual === 'string') checkString(value as string, s, loc, ctx);
  else if (actual === 'integer' || actual === 'number') checkNumber(value as number, s, loc, ctx);
  checkEnum(out, s, loc, ctx);
  checkJunctors(out, s, loc, ctx);
  return out;
}

/**
 * Copy on write: an object or array comes back as itself when nothing in it was pruned, defaulted or
 * replaced. Every write is validated, and a full copy of each object made the validator the largest
 * allocator of the local API (docs/decisions/0029-local-fleet-clients-and-heaps.md).
 */
function walkObject(obj: Record<string, unknown>, s: SchemaNode, loc: Location, ctx: Collector, mode: Mode) {
  const embedded = mode.resource || s['x-kubernetes-embedded-resource'] === true;
  if (embedded && !mode.resource) checkEmbeddedTypeMeta(obj, loc, ctx);
  const props = s.properties ?? NO_PROPERTIES;
  const additional = s.additionalProperties;
  const keys = Object.keys(obj);
  /** The copy, made at the first key whose value changes or goes: the keys before it as they were. */
  let out: Record<string, unknown> | undefined;
  const childMode = mode.goDecoded ? GO_DECODED_CHILD : CHILD;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === undefined) continue; // i < keys.length
    const v = obj[key];
    const known = props[key] ?? (embedded ? implicitResourceField(key) : undefined);
    // A resource's metadata is decoded into the ObjectMeta Go struct even for custom resources.
    const knownMode = embedded && key === 'metadata' ? GO_DECODED_CHILD : childMode;
    let kept: unknown;
    if (known) kept = walkChild(v, known, propertyLocation(loc, key), ctx, knownMode, !mode.goDecoded);
    else if (additional && typeof additional === 'object')
      kept = walkChild(v, additional, mapKeyLocation(loc, key), ctx, childMode, !mode.goDecoded);
    else if (additional === true || s['x-kubernetes-preserve-unknown-fields']) kept = v;
    else {
      ctx.unknown.push(propertyLocation(loc, key).path);
      kept = DROP;
    }
    if (out === undefined && kept !== v) out = copyOfFirst(obj, keys, i);
    if (out !== undefined && kept !== DROP) out[key] = kept;
  }
  if (!mode.goDecoded) {
    for (const [key, schema] of Object.entries(props)) {
      if (!(key in (out ?? obj)) && schema.default !== undefined) {
        out ??= copyOfFirst(obj, keys, keys.length);
        out[key] = walk(structuredClone(schema.default), schema, propertyLocation(loc, key), ctx, childMode);
      }
    }
  }
  const result = out ?? obj;
  for (const key of s.required ?? []) {
    if (!(key in result)) ctx.causes.push(required(propertyLocation(loc, key).name));
  }
  if (s.maxProperties !== undefined || s.minProperties !== undefined) {
    const count = Object.keys(result).length;
    if (s.maxProperties !== undefined && count > s.maxProperties)
      ctx.causes.push(tooMany(loc.name, count, s.maxProperties));
    if (s.minProperties !== undefined && count < s.minProperties) {
      ctx.causes.push(
        invalid(loc.name, count, `${loc.name} in body should have at least ${s.minProperties} properties`),
      );
    }
  }
  return result;
}

/** Modes below a resource's root (shared: a mode is never changed). */
const CHILD: Mode = { resource: false, goDecoded: false };
const GO_DECODED_CHILD: Mode = { resource: false, goDecoded: true };
const NO_PROPERTIES: Record<string, SchemaNode> = {};

/** A new object holding the first `count` keys of `obj`, as they were. */
function copyOfFirst(obj: Record<string, unknown>, keys: string[], count: number): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (let j = 0; j < count; j++) {
    const key = keys[j];
    if (key !== undefined) copy[key] = obj[key]; // j < count <= keys.length
  }
  return copy;
}

/** The child's value to keep, or `DROP`; `defaults` when the parent is not Go-decoded (custom resources). */
function walkChild(
  v: unknown,
  schema: SchemaNode,
  at: Location,
  ctx: Collector,
  childMode: Mode,
  defaults: boolean,
): unknown {
  if (v === null && !schema.nullable) {
    // Non-nullable nulls are dropped (custom resources, before defaulting) or decode to the zero value
    // (Go types), so they never fail validation themselves.
    if (schema.default !== undefined && defaults)
      return walk(structuredClone(schema.default), schema, at, ctx, childMode);
    return DROP;
  }
  return walk(v, schema, at, ctx, childMode);
}

/** A child left out of the walked object (an unknown field, a null that decodes to nothing). */
const DROP = Symbol('drop');

const TYPE_META_FIELD: SchemaNode = { type: 'string' };

/** apiVersion, kind and metadata exist on every resource even when its schema leaves them out. */
function implicitResourceField(key: string): SchemaNode | undefined {
  if (key === 'apiVersion' || key === 'kind') return TYPE_META_FIELD;
  if (key === 'metadata') return builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta');
  return undefined;
}

function checkEmbeddedTypeMeta(obj: Record<string, unknown>, loc: Location, ctx: Collector) {
  for (const key of ['apiVersion', 'kind']) {
    const path = propertyLocation(loc, key).path;
    if (!(key in obj)) ctx.causes.push(required(path, 'must not be empty'));
    else if (typeof obj[key] !== 'string') ctx.causes.push(invalid(path, obj[key], 'must be a string'));
    else if (obj[key] === '') ctx.causes.push(invalid(path, '', 'must not be empty'));
  }
}

function walkArray(items: unknown[], s: SchemaNode, loc: Location, ctx: Collector, mode: Mode): unknown[] {
  const itemMode = mode.goDecoded ? GO_DECODED_CHILD : CHILD;
  let out = items;
  if (s.items) {
    for (let i = 0; i < items.length; i++) {
      const walked = walk(items[i], s.items, indexLocation(loc, i), ctx, itemMode);
      if (walked !== items[i] && out === items) out = items.slice();
      if (out !== items) out[i] = walked;
    }
  }
  if (s.maxItems !== undefined && out.length > s.maxItems) ctx.causes.push(tooMany(loc.name, out.length, s.maxItems));
  if (s.minItems !== undefined && out.length < s.minItems) {
    ctx.causes.push(invalid(loc.name, out.length, `${loc.name} in body should have at least ${s.minItems} items`));
  }
  if (s.uniqueItems && new Set(out.map(canonical)).size !== out.length) {
    ctx.causes.push(invalid(loc.name, '', `${loc.name} in body shouldn't contain duplicates`));
  }
  checkListSemantics(out, s, loc, ctx);
  return out;
}

/** x-kubernetes-list-type set/map: entries (or their keys) must be unique. */
function checkListSemantics(items: unknown[], s: SchemaNode, loc: Location, ctx: Collector) {
  const listType = s['x-kubernetes-list-type'];
  if (ctx.builtin || (listType !== 'set' && listType !== 'map')) return;
  const seen = new Set<string>();
  items.forEach((item, i) => {
    let identity: unknown = item;
    if (listType === 'map') {
      if (!item || typeof item !== 'object' || Array.isArray(item)) return;
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      identity = Object.fromEntries(
        keys.filter((k) => k in item).map((k) => [k, (item as Record<string, unknown>)[k]]),
      );
    }
    const id = canonical(identity);
    if (seen.has(id)) {
      ctx.causes.push(duplicate(`${loc.path}[${i}]`, identity));
    }
    seen.add(id);
  });
}

/** Length in code points, as kube counts a string's length. */
function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function checkString(value: string, s: SchemaNode, loc: Location, ctx: Collector) {
  // A string has at most as many code points as UTF-16 units and at least half as many: count them (which
  // walks the whole string, a PEM or a base64 blob too) only when that leaves the bound in doubt.
  if (s.maxLength !== undefined && value.length > s.maxLength && codePoints(value) > s.maxLength)
    ctx.causes.push(tooLong(loc.name, s.maxLength));
  if (s.minLength !== undefined && value.length / 2 < s.minLength && codePoints(value) < s.minLength) {
    ctx.causes.push(invalid(loc.name, value, `${loc.name} in body should be at least ${s.minLength} chars long`));
  }
  if (s.pattern !== undefined && !patternMatches(s.pattern, value)) {
    ctx.causes.push(invalid(loc.name, value, `${loc.name} in body should match '${s.pattern}'`));
  }
  if (s.format && !s['x-kubernetes-int-or-string'] && !validateFormat(s.format, value)) {
    ctx.causes.push(
      typeInvalid(loc.name, value, `${loc.name} in body must be of type ${s.format}: ${JSON.stringify(value)}`),
    );
  }
}

function checkNumber(value: number, s: SchemaNode, loc: Location, ctx: Collector) {
  const bound = (n: number) => (Number.isInteger(value) && Number.isInteger(n) ? String(n) : goNumber(n));
  if (s.multipleOf !== undefined && s.multipleOf !== 0 && !isMultipleOf(value, s.multipleOf)) {
    ctx.causes.push(invalid(loc.name, value, `${loc.name} in body should be a multiple of ${bound(s.multipleOf)}`));
  }
  if (s.maximum !== undefined && (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)) {
    const rel = s.exclusiveMaximum ? 'less than' : 'less than or equal to';
    ctx.causes.push(invalid(loc.name, value, `${loc.name} in body should be ${rel} ${bound(s.maximum)}`));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)) {
    const rel = s.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
    ctx.causes.push(invalid(loc.name, value, `${loc.name} in body should be ${rel} ${bound(s.minimum)}`));
  }
}

function checkEnum(value: unknown, s: SchemaNode, loc: Location, ctx: Collector) {
  if (!s.enum || s.enum.length === 0) return;
  const id = canonical(value);
  if (s.enum.some((e) => canonical(e) === id)) return;
  const supported = s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  ctx.causes.push(notSupported(loc.name, value, supported));
}

/** allOf/anyOf/oneOf/not only add value validation in a structural schema: no pruning below them. */
function checkJunctors(value: unknown, s: SchemaNode, loc: Location, ctx: Collector) {
  // Every node of every write comes here, and almost none has a junctor: no closure for those.
  if (!s.allOf && !s.anyOf && !s.oneOf && !s.not) return;
  const tryBranch = (branch: SchemaNode) => {
    const scratch: Collector = { causes: [], unknown: [], builtin: ctx.builtin };
    walk(value, { ...branch, 'x-kubernetes-preserve-unknown-fields': true }, loc, scratch, {
      resource: false,
      goDecoded: ctx.builtin,
    });
    return scratch.causes;
  };
  for (const branch of s.allOf ?? []) ctx.causes.push(...tryBranch(branch));
  if (s.anyOf && s.anyOf.length > 0 && !s.anyOf.some((b) => tryBranch(b).length === 0)) {
    ctx.causes.push(invalid(loc.name, '', `${loc.name} must validate at least one schema (anyOf)`));
  }
  if (s.oneOf && s.oneOf.length > 0 && s.oneOf.filter((b) => tryBranch(b).length === 0).length !== 1) {
    ctx.causes.push(invalid(loc.name, '', `${loc.name} must validate one and only one schema (oneOf)`));
  }
  if (s.not && tryBranch(s.not).length === 0) {
    ctx.causes.push(invalid(loc.name, '', `${loc.name} must not validate the schema (not)`));
  }
}

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

function jsonType(value: unknown): JsonType {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  return 'object';
}

function typeMatches(s: SchemaNode, actual: JsonType): boolean {
  if (s['x-kubernetes-int-or-string']) {
    if (actual === 'integer' || actual === 'string') return true;
    return s.format === 'quantity' && actual === 'number';
  }
  if (!s.type) return true;
  if (s.type === 'number') return actual === 'number' || actual === 'integer';
  return s.type === actual;
}

function typeName(s: SchemaNode): string {
  return s['x-kubernetes-int-or-string'] ? 'integer,string' : (s.type ?? '');
}

function propertyLocation(loc: Location, key: string): Location {
  return new Location(loc, 'property', key);
}

function mapKeyLocation(loc: Location, key: string): Location {
  return new Location(loc, 'mapKey', key);
}

function indexLocation(loc: Location, i: number): Location {
  return new Location(loc, 'index', String(i));
}

const patternCache = new Map<string, RegExp | null>();

function patternMatches(pattern: string, value: string): boolean {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, 'u');
    } catch {
      re = null; // rejected when the CRD was validated; nothing sensible to enforce
    }
    patternCache.set(pattern, re);
  }
  return re ? re.test(value) : true;
}

function isMultipleOf(value: number, factor: number): boolean {
  const q = value / factor;
  return Math.abs(q - Math.round(q)) < 1e-9;
}

/** Order-insensitive identity of a JSON value, for enum, uniqueness and list-map keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
