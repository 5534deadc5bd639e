/**
 * kube computes an updater's fields by comparing Go objects, and a Go struct always carries its value
 * struct fields (`spec`, `template`, ...) and its fields without omitempty (`containers`, `selector`),
 * so those are never "added" as a whole and get no `.` entry. Our objects are plain JSON, so for
 * built-in kinds this guesses which absent fields the Go zero value would carry: a schema default of
 * `{}`, the usual value-struct field names, and required fields.
 */
import { isKubernetesApiGroup } from '../../api-groups.ts';
import type { SchemaNode } from '../../schema/types.ts';
import { isObject } from '../json-value.ts';
import { effectiveSchema } from '../schema-view.ts';
import type { ZeroPresence } from '../typed/compare.ts';

const valueStructFields = new Set([
  'metadata',
  'spec',
  'status',
  'template',
  'jobTemplate',
  'strategy',
  'updateStrategy',
  'resources',
]);

export function isBuiltinApiVersion(apiVersion: unknown): boolean {
  if (typeof apiVersion !== 'string') return false;
  const slash = apiVersion.indexOf('/');
  return isKubernetesApiGroup(slash < 0 ? '' : apiVersion.slice(0, slash));
}

export function zeroPresenceFor(apiVersion: unknown): ZeroPresence {
  const builtin = isBuiltinApiVersion(apiVersion);
  return (key, field, parent) => {
    const f = effectiveSchema(field);
    if (!f) return false;
    if (isObject(f.default) && Object.keys(f.default).length === 0) return true;
    if (!builtin) return false;
    if (valueStructFields.has(key) && (f.type === 'object' || f.properties !== undefined)) return true;
    return effectiveSchema(parent as SchemaNode | undefined)?.required?.includes(key) ?? false;
  };
}
