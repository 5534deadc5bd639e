import * as z from 'zod';

/** An OpenAPI v3 schema node as a CRD carries it (the subset pool-spirit emits). */
export type StructuralSchema = Record<string, unknown>;

const SAFE = Number.MAX_SAFE_INTEGER;
const KEPT = [
  'description',
  'enum',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'required',
];

/**
 * A zod schema as a *structural* CRD schema: every node typed, no $ref, maps as additionalProperties,
 * quantities as x-kubernetes-int-or-string, arbitrary JSON as x-kubernetes-preserve-unknown-fields.
 * Defaults are dropped on purpose (see core/poolspirit/api.ts).
 */
export function zodToStructural(schema: z.ZodType): StructuralSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw', reused: 'inline' }) as Record<
    string,
    unknown
  >;
  return convert(json, '');
}

function convert(node: Record<string, unknown>, at: string): StructuralSchema {
  if ('$ref' in node) throw new Error(`CRD schema at ${at || '/'} has a $ref; CRDs need every schema inline`);
  const out: StructuralSchema = {};
  if (node['x-kubernetes-int-or-string']) {
    if (node.description) out.description = node.description;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
    if (node.pattern) out.pattern = node.pattern;
    out['x-kubernetes-int-or-string'] = true;
    return out;
  }
  if (node.anyOf || node.oneOf || node.allOf)
    throw new Error(`CRD schema at ${at || '/'} is a union; only quantities may be`);
  for (const key of KEPT) {
    if (node[key] === undefined) continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(node[key] as number) >= SAFE) continue;
    if (key === 'required' && (node.required as string[]).length === 0) continue;
    out[key] = node[key];
  }
  if (node.const !== undefined) out.enum = [node.const]; // OpenAPI v3 (CRDs) has no const
  for (const [key, value] of Object.entries(node)) if (key.startsWith('x-kubernetes-')) out[key] = value;
  if (node.type === undefined) {
    out['x-kubernetes-preserve-unknown-fields'] = true; // arbitrary JSON (an override's value)
    return out;
  }
  out.type = node.type;
  if (node.type === 'object') {
    if (node.properties) {
      out.properties = Object.fromEntries(
        Object.entries(node.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [
          k,
          convert(v, `${at}/${k}`),
        ]),
      );
    }
    if (typeof node.additionalProperties === 'object') {
      out.additionalProperties = convert(node.additionalProperties as Record<string, unknown>, `${at}/*`);
    }
  }
  if (node.type === 'array') out.items = convert(node.items as Record<string, unknown>, `${at}[]`);
  return orderKeys(out);
}

/** Stable, readable key order: description first, type next, then the rest alphabetically. */
function orderKeys(node: StructuralSchema): StructuralSchema {
  const first = ['description', 'type'];
  const keys = [
    ...first.filter((k) => k in node),
    ...Object.keys(node)
      .filter((k) => !first.includes(k))
      .sort(),
  ];
  return Object.fromEntries(keys.map((k) => [k, node[k]]));
}
