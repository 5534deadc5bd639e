/** Reading SchemaNodes the way both patch engines need them: `allOf` wrappers flattened into one node. */
import type { SchemaNode } from '../schema/types.ts';

const flattened = new WeakMap<SchemaNode, SchemaNode>();

/** The node with its `allOf` members folded in (OpenAPI v3 wraps `$ref`s as `allOf: [ref]`). */
export function effectiveSchema(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node?.allOf?.length) return node;
  let out = flattened.get(node);
  if (!out) {
    const { allOf, ...own } = node;
    out = {};
    for (const member of allOf) {
      const m = effectiveSchema(member) ?? {};
      out = { ...out, ...m, properties: { ...out.properties, ...m.properties } };
    }
    out = { ...out, ...own, properties: { ...out.properties, ...own.properties } };
    if (Object.keys(out.properties ?? {}).length === 0) delete out.properties;
    flattened.set(node, out);
  }
  return out;
}

/** Schema of `key` inside an object schema: a declared property, else the additionalProperties schema. */
export function propertySchema(node: SchemaNode | undefined, key: string): SchemaNode | undefined {
  const s = effectiveSchema(node);
  if (!s) return undefined;
  const declared = s.properties?.[key];
  if (declared) return declared;
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}
