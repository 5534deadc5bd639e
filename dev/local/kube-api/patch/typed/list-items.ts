/** Path elements of list items: `k:{...}` for lists keyed by fields, `v:...` for sets of scalars. */
import type { SchemaNode } from '../../schema/types.ts';
import { keyPE, type PathElement } from '../fieldpath/path-element.ts';
import { isObject } from '../json-value.ts';
import { effectiveSchema } from '../schema-view.ts';

/** Key defaults kube's OpenAPI declares but schemas generated from Go types may lack. */
const wellKnownKeyDefaults: Record<string, unknown> = { protocol: 'TCP' };

export function listItemPE(
  keys: readonly string[] | undefined,
  item: unknown,
  itemSchema: SchemaNode | undefined,
): PathElement {
  if (keys && keys.length > 0) {
    if (item === null) throw new Error('associative list with keys may not have a null element');
    if (!isObject(item)) throw new Error('associative list with keys may not have non-map elements');
    const props = effectiveSchema(itemSchema)?.properties;
    const fields: Array<[string, unknown]> = [];
    for (const k of keys) {
      if (Object.hasOwn(item, k)) fields.push([k, item[k]]);
      else if (props?.[k]?.default !== undefined) fields.push([k, props[k].default]);
      else if (k in wellKnownKeyDefaults) fields.push([k, wellKnownKeyDefaults[k]]);
      else
        throw new Error(
          `associative list with keys has an element that omits key field "${k}" (and doesn't have default value)`,
        );
    }
    return keyPE(fields);
  }
  if (isObject(item)) throw new Error("associative list without keys has an element that's a map type");
  if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
  if (item === null) throw new Error("associative list without keys has an element that's an explicit null");
  return { value: item };
}
