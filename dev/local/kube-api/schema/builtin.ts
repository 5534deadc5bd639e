/**
 * The built-in kinds' schemas, from the generated builtin-schemas.json. The file keeps named Go types as
 * `{ "$def": name }` references; callers get fully resolved SchemaNodes, where a type that contains
 * itself (JSONSchemaProps) is cut off below its first level as `x-kubernetes-preserve-unknown-fields`.
 */
import { readFileSync } from 'node:fs';
import type { GeneratedSchemas, StoredNode } from './generate/declarations-to-schemas.ts';
import type { SchemaNode } from './types.ts';

let loaded: GeneratedSchemas | undefined;

/** The generated file as stored, with definition references (used to build OpenAPI components). */
export function builtinDefinitions(): GeneratedSchemas {
  loaded ??= JSON.parse(readFileSync(new URL('./builtin-schemas.json', import.meta.url), 'utf8')) as GeneratedSchemas;
  return loaded;
}

/** Definition name for a built-in kind, e.g. `io.k8s.api.apps.v1.Deployment`. */
export function builtinDefinitionName(group: string, version: string, kind: string): string | undefined {
  return builtinDefinitions().kinds[`${group || 'core'}/${version}/${kind}`];
}

const resolvedKinds = new Map<string, SchemaNode>();
const builtinRoots = new WeakSet<SchemaNode>();

/**
 * Whether the node is a built-in kind's root schema from builtinSchema(). kube validates built-ins with Go
 * code, not OpenAPI, so OpenAPI-only rules (list-set/map uniqueness) must not reject them.
 */
export function isBuiltinSchema(node: SchemaNode): boolean {
  return builtinRoots.has(node);
}

export function builtinSchema(group: string, version: string, kind: string): SchemaNode | undefined {
  const name = builtinDefinitionName(group, version, kind);
  if (!name) return undefined;
  let node = resolvedKinds.get(name);
  if (!node) {
    node = deepFreeze(resolveDefinition(name));
    resolvedKinds.set(name, node);
    builtinRoots.add(node);
  }
  return node;
}

/** A definition with every reference replaced by its (cycle-cut) content. */
export function resolveDefinition(name: string): SchemaNode {
  return resolve({ $def: name }, [], builtinDefinitions().definitions);
}

function resolve(node: StoredNode, stack: string[], defs: Record<string, StoredNode>): SchemaNode {
  if (node.$def) {
    const { $def: name, ...siblings } = node;
    if (stack.includes(name)) {
      return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, ...withoutRef(siblings) };
    }
    const target = defs[name];
    if (!target) throw new Error(`builtin-schemas.json: missing definition ${name}`);
    // A use site's own description and list/patch extensions win over the type's.
    return { ...resolve(target, [...stack, name], defs), ...withoutRef(siblings) };
  }
  const out: SchemaNode = { ...withoutRef(node) };
  if (node.properties) {
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, resolve(v, stack, defs)]));
  }
  if (node.items) out.items = resolve(node.items, stack, defs);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    out.additionalProperties = resolve(node.additionalProperties, stack, defs);
  }
  return out;
}

function withoutRef(node: StoredNode): SchemaNode {
  const { $def: _ignored, ...rest } = node;
  return rest;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
