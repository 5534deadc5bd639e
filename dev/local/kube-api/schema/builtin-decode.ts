/**
 * kube-apiserver decodes built-in kinds into Go structs, so a value of the wrong JSON type is a 400
 * BadRequest decode error, not a 422 with causes:
 *   Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go
 *   struct field DeploymentSpec.spec.replicas of type int32
 * This finds the first such value (encoding/json reports the earliest) and words it the same way: the
 * innermost Go struct, the JSON field names from the root (no list indexes or map keys), the Go type.
 */
import { builtinDefinitionName, builtinDefinitions } from './builtin.ts';
import type { StoredNode } from './generate/declarations-to-schemas.ts';

interface Context {
  struct: string;
  fields: string[];
}

/** The decode error message for `obj` as a built-in kind, or undefined when Go would decode it. */
export function builtinDecodeError(group: string, version: string, kind: string, obj: unknown): string | undefined {
  const name = builtinDefinitionName(group, version, kind);
  if (!name) return undefined;
  const error = check(obj, { $def: name }, { struct: kind, fields: [] });
  return error && `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${error}`;
}

function check(value: unknown, node: StoredNode, ctx: Context, typeName = goType(node)): string | undefined {
  if (value === null || value === undefined) return undefined; // null decodes to the zero value
  if (node.$def) {
    const def = builtinDefinitions().definitions[node.$def];
    if (!def) throw new Error(`builtin-schemas.json: no definition ${node.$def}`);
    // Named scalars (Time, Quantity, IntOrString) decode like their underlying schema.
    if (def.type !== 'object') return check(value, def, ctx, typeName);
    if (jsonKind(value) !== 'object') return mismatch(value, typeName, ctx);
    if (!def.properties) return undefined; // free-form (RawExtension, FieldsV1)
    const struct = node.$def.slice(node.$def.lastIndexOf('.') + 1);
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const prop = def.properties[key];
      if (!prop) continue; // unknown fields are strict-decoding errors, reported separately
      const err = check(v, prop, { struct, fields: [...ctx.fields, key] });
      if (err) return err;
    }
    return undefined;
  }
  if (node['x-kubernetes-preserve-unknown-fields'] && !node.type) return undefined;
  if (node['x-kubernetes-int-or-string']) {
    const kind = jsonKind(value);
    const ok = kind === 'string' || (kind === 'number' && (node.format === 'quantity' || Number.isInteger(value)));
    return ok ? undefined : mismatch(value, typeName, ctx);
  }
  switch (node.type) {
    case 'string':
    case 'boolean':
      return jsonKind(value) === (node.type === 'boolean' ? 'bool' : 'string')
        ? undefined
        : mismatch(value, typeName, ctx);
    case 'integer':
    case 'number':
      return numberError(value, node, ctx, typeName);
    case 'array': {
      if (jsonKind(value) !== 'array') return mismatch(value, typeName, ctx);
      for (const item of value as unknown[]) {
        const err = node.items && check(item, node.items, ctx);
        if (err) return err;
      }
      return undefined;
    }
    case 'object': {
      if (jsonKind(value) !== 'object') return mismatch(value, typeName, ctx);
      const additional = node.additionalProperties;
      if (!additional || typeof additional !== 'object') return undefined;
      for (const v of Object.values(value as Record<string, unknown>)) {
        const err = check(v, additional, ctx);
        if (err) return err;
      }
      return undefined;
    }
  }
  return undefined;
}

function numberError(value: unknown, node: StoredNode, ctx: Context, typeName: string): string | undefined {
  if (typeof value !== 'number') return mismatch(value, typeName, ctx);
  if (node.type === 'number') return undefined;
  const limit = node.format === 'int64' ? 2 ** 63 : 2 ** 31;
  if (!Number.isInteger(value) || value >= limit || value < -limit)
    return mismatch(value, typeName, ctx, `number ${value}`);
  return undefined;
}

function mismatch(value: unknown, type: string, ctx: Context, described?: string): string {
  const what = described ?? jsonKind(value);
  const target = ctx.fields.length > 0 ? `Go struct field ${ctx.struct}.${ctx.fields.join('.')}` : 'Go value';
  return `json: cannot unmarshal ${what} into ${target} of type ${type}`;
}

function jsonKind(value: unknown): 'string' | 'number' | 'bool' | 'array' | 'object' {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string' || typeof value === 'number') return typeof value as 'string' | 'number';
  return 'object';
}

/** The Go type as reflect prints it: `int32`, `[]v1.Container`, `map[string]string`, `v1.DeploymentSpec`. */
function goType(node: StoredNode): string {
  if (node.$def) {
    const parts = node.$def.split('.');
    return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
  }
  switch (node.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return node.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${node.items ? goType(node.items) : 'interface {}'}`;
    case 'object':
      return typeof node.additionalProperties === 'object'
        ? `map[string]${goType(node.additionalProperties)}`
        : 'map[string]interface {}';
  }
  return 'interface {}';
}
