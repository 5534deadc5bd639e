/**
 * CustomResourceDefinitions: the defaults kube applies before validating one, what its validation
 * checks on create and update (apiextensions' ValidateCustomResourceDefinition), and the schema a
 * version's custom resources are validated against.
 */

import { isDns1035Label, isDns1123Subdomain } from '../validation/messages.ts';
import { builtinSchema } from './builtin.ts';
import { validateOpenApiSchema } from './crd-schema-rules.ts';
import { forbidden, GoLiteral, invalid, notSupported, required } from './field-errors.ts';
import type { SchemaNode, StatusCause } from './types.ts';

/** A CRD as the client sent it: any field may hold anything until checked. */
type Json = Record<string, unknown>;

/** `v?.[k1]?.[k2]...` on a value as the client sent it: undefined where the path stops. */
function at(v: unknown, ...keys: string[]): unknown {
  let out = v;
  for (const k of keys) out = out == null ? undefined : (out as Json)[k];
  return out;
}

/** `list.includes(v)` for a value not known to be a string. */
const oneOf = (list: readonly string[], v: unknown) => (list as readonly unknown[]).includes(v);

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

/** SetDefaults for a v1 CRD: singular and listKind from kind, conversion strategy None. Returns a copy. */
export function withCrdDefaults<T extends object>(crd: T): T {
  const out = structuredClone(crd) as Json;
  // As before, a spec or names that is not an object throws on the assignments (the casts name what is assumed).
  out.spec ??= {};
  const spec = out.spec as Json;
  spec.names ??= {};
  const names = spec.names as Json;
  if (!names.singular && names.kind) names.singular = String(names.kind).toLowerCase();
  if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  spec.conversion ??= { strategy: 'None' };
  return out as T;
}

/**
 * The causes kube-apiserver reports for an invalid CRD (defaults applied first, as kube does). Pass the
 * stored object on update: group and plural never change, scope and kind not once it is Established.
 */
export function validateCrd(crd: object, old?: object): StatusCause[] {
  const obj = withCrdDefaults(crd) as Json;
  const spec: Json = isObject(obj.spec) ? obj.spec : {};
  const causes = [...metadataCauses((obj.metadata ?? {}) as Json, spec), ...specCauses(spec)];
  if (old) {
    const oldSpec = ((withCrdDefaults(old) as Json).spec ?? {}) as Json;
    causes.push(...immutableCauses(spec, oldSpec, isEstablished(old)));
  }
  return causes;
}

function immutableCauses(spec: Json, oldSpec: Json, established: boolean): StatusCause[] {
  const checks: Array<[string, unknown, unknown]> = [];
  if (established) {
    checks.push(
      ['spec.scope', spec.scope, oldSpec.scope],
      ['spec.names.kind', at(spec, 'names', 'kind'), at(oldSpec, 'names', 'kind')],
    );
  }
  checks.push(
    ['spec.group', spec.group, oldSpec.group],
    ['spec.names.plural', at(spec, 'names', 'plural'), at(oldSpec, 'names', 'plural')],
  );
  return checks
    .filter(([, now, before]) => now !== before)
    .map(([field, now]) => invalid(field, now ?? '', 'field is immutable'));
}

function isEstablished(crd: object): boolean {
  const listed = at(crd, 'status', 'conditions');
  const conditions: unknown[] = Array.isArray(listed) ? listed : [];
  return conditions.some((c) => at(c, 'type') === 'Established' && at(c, 'status') === 'True');
}

function metadataCauses(meta: Json, spec: Json): StatusCause[] {
  const name = (meta.name ?? '') as string; // as sent: a name that is not a string fails as before
  if (!name) {
    return meta.generateName ? [] : [required('metadata.name', 'name or generateName is required')];
  }
  const problems = isDns1123Subdomain(name);
  if (name !== `${at(spec, 'names', 'plural') ?? ''}.${spec.group ?? ''}`)
    problems.push('must be spec.names.plural+"."+spec.group');
  return problems.map((p) => invalid('metadata.name', name, p));
}

function specCauses(spec: Json): StatusCause[] {
  const out: StatusCause[] = [];
  const group = (spec.group ?? '') as string; // as sent: a group that is not a string fails as before
  if (!group) out.push(required('spec.group'));
  else if (isDns1123Subdomain(group).length > 0)
    out.push(invalid('spec.group', group, isDns1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2)
    out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));

  if (!spec.scope) out.push(required('spec.scope'));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    out.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));

  const versions: Json[] = Array.isArray(spec.versions) ? spec.versions : [];
  const seen = new Set<unknown>();
  let uniqueNames = true;
  let storageCount = 0;
  versions.forEach((version, i) => {
    const path = `spec.versions[${i}]`;
    if (version.storage === true) storageCount++;
    if (seen.has(version.name)) uniqueNames = false;
    seen.add(version.name);
    const nameProblems = isDns1035Label(String(version.name ?? ''));
    if (nameProblems.length > 0) out.push(invalid(`${path}.name`, version.name ?? '', nameProblems.join(',')));
    out.push(...versionCauses(version, path));
  });
  const versionsValue = goVersions(versions);
  if (!uniqueNames) out.push(invalid('spec.versions', versionsValue, 'must contain unique version names'));
  if (storageCount !== 1)
    out.push(invalid('spec.versions', versionsValue, 'must have exactly one version marked as storage version'));

  const names = (spec.names ?? {}) as Json;
  for (const field of ['plural', 'singular', 'kind', 'listKind']) {
    if (!names[field]) out.push(required(`spec.names.${field}`));
  }
  out.push(...nameCauses(names, 'spec.names'));

  const strategy = at(spec, 'conversion', 'strategy');
  if (!strategy) out.push(required('spec.conversion.strategy'));
  else if (strategy !== 'None' && strategy !== 'Webhook')
    out.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  else if (strategy === 'Webhook' && !at(spec, 'conversion', 'webhook', 'clientConfig')) {
    out.push(required('spec.conversion.webhookClientConfig', 'required when strategy is set to Webhook'));
  } else if (strategy === 'None' && at(spec, 'conversion', 'webhook')) {
    out.push(forbidden('spec.conversion.webhookClientConfig', 'should not be set when strategy is not set to Webhook'));
  }
  if (spec.preserveUnknownFields === true) {
    out.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  return out;
}

function versionCauses(version: Json, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const schema = at(version, 'schema', 'openAPIV3Schema');
  if (!isObject(schema)) out.push(required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
  else out.push(...validateOpenApiSchema(schema, `${path}.schema.openAPIV3Schema`));
  out.push(...subresourceCauses(version.subresources, `${path}.subresources`));
  (Array.isArray(version.additionalPrinterColumns) ? version.additionalPrinterColumns : []).forEach(
    (col: Json, i: number) => {
      out.push(...printerColumnCauses(col, `${path}.additionalPrinterColumns[${i}]`));
    },
  );
  return out;
}

function nameCauses(names: Json, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const dns1035 = (field: string, value: unknown, lower = false, prefix = '') => {
    if (!value) return;
    const problems = isDns1035Label(lower ? String(value).toLowerCase() : String(value));
    if (problems.length > 0) out.push(invalid(`${path}.${field}`, value, prefix + problems.join(',')));
  };
  dns1035('plural', names.plural);
  dns1035('singular', names.singular);
  dns1035('kind', names.kind, true, 'may have mixed case, but should otherwise match: ');
  dns1035('listKind', names.listKind, true, 'may have mixed case, but should otherwise match: ');
  // As before, a list that is not an array throws here (forEach).
  ((names.shortNames ?? []) as unknown[]).forEach((s, i) => {
    dns1035(`shortNames[${i}]`, s);
  });
  if (names.kind && names.kind === names.listKind)
    out.push(invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  ((names.categories ?? []) as unknown[]).forEach((c, i) => {
    dns1035(`categories[${i}]`, c);
  });
  return out;
}

function printerColumnCauses(col: Json, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!col.name) out.push(required(`${path}.name`));
  const typeRule = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!col.type) out.push(required(`${path}.type`, typeRule));
  else if (!oneOf(PRINTER_COLUMN_TYPES, col.type)) out.push(invalid(`${path}.type`, col.type, typeRule));
  if (col.format && !oneOf(PRINTER_COLUMN_FORMATS, col.format)) {
    out.push(invalid(`${path}.format`, col.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  }
  // The internal type's field is JSONPath, so that is the path kube reports.
  if (!col.jsonPath) out.push(required(`${path}.JSONPath`));
  else out.push(...simpleJsonPathCauses(col.jsonPath as string, `${path}.JSONPath`)); // as sent, as before
  return out;
}

function subresourceCauses(sub: unknown, path: string): StatusCause[] {
  const scale = at(sub, 'scale');
  if (!isObject(scale)) return [];
  const out: StatusCause[] = [];
  const check = (field: string, value: unknown, under: '.spec.' | '.status.', optional = false) => {
    const p = `${path}.scale.${field}`;
    if (!value) {
      if (!optional) out.push(required(p));
      return;
    }
    const problems = simpleJsonPathCauses(String(value), p);
    if (problems.length > 0) out.push(...problems);
    else if (!String(value).startsWith(under))
      out.push(invalid(p, value, `should be a json path under ${under.slice(0, -1)}`));
  };
  check('specReplicasPath', scale.specReplicasPath, '.spec.');
  check('statusReplicasPath', scale.statusReplicasPath, '.status.');
  check('labelSelectorPath', scale.labelSelectorPath, '.status.', true);
  return out;
}

function simpleJsonPathCauses(s: string, path: string): StatusCause[] {
  if (s.length === 0) return [invalid(path, s, 'must not be empty')];
  if (!s.startsWith('.')) return [invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

const crdSchemaCache = new WeakMap<object, Map<string, SchemaNode | undefined>>();

/**
 * The schema a CRD version's custom resources are validated and pruned against: the version's
 * openAPIV3Schema with apiVersion and kind as strings and metadata as the full ObjectMeta, where only
 * name and generateName keep constraints from the CRD, as kube does.
 */
export function crdVersionSchema(crd: object, version: string): SchemaNode | undefined {
  let perCrd = crdSchemaCache.get(crd);
  if (!perCrd) {
    perCrd = new Map();
    crdSchemaCache.set(crd, perCrd);
  }
  if (!perCrd.has(version)) perCrd.set(version, buildCrdVersionSchema(crd as Json, version));
  return perCrd.get(version);
}

function buildCrdVersionSchema(crd: Json, version: string): SchemaNode | undefined {
  // A stored CRD: validated on write, so its versions are objects and their schemas schemas.
  const v = ((at(crd, 'spec', 'versions') ?? []) as unknown[]).find((x) => at(x, 'name') === version);
  if (!v) return undefined;
  const declared = structuredClone(
    at(v, 'schema', 'openAPIV3Schema') ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  ) as SchemaNode;
  const objectMeta = builtinSchema('meta.k8s.io', 'v1', 'ObjectMeta')!;
  const declaredMeta = declared.properties?.metadata?.properties ?? {};
  const metaProps = { ...objectMeta.properties };
  for (const field of ['name', 'generateName'] as const) {
    if (declaredMeta[field]) metaProps[field] = { ...metaProps[field], ...declaredMeta[field], type: 'string' };
  }
  return {
    ...declared,
    type: 'object',
    properties: {
      ...declared.properties,
      apiVersion: {
        type: 'string',
        description: 'APIVersion defines the versioned schema of this representation of an object.',
      },
      kind: {
        type: 'string',
        description: 'Kind is a string value representing the REST resource this object represents.',
      },
      metadata: { ...objectMeta, properties: metaProps, description: "Standard object's metadata." },
    },
  };
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's %#v of the internal versions slice, which kube prints as the bad value of spec.versions. */
function goVersions(versions: Json[]): GoLiteral {
  const type = 'apiextensions.CustomResourceDefinitionVersion';
  if (versions.length === 0) return new GoLiteral(`[]${type}(nil)`);
  const ptr = (t: string, set: unknown) => (set ? `(*${t})(0xc000000000)` : `(*${t})(nil)`);
  const one = (v: Json) =>
    `${type}{Name:${JSON.stringify(String(v.name ?? ''))}, Served:${v.served === true}, Storage:${v.storage === true}, ` +
    `Deprecated:${v.deprecated === true}, DeprecationWarning:${ptr('string', v.deprecationWarning)}, ` +
    `Schema:${ptr('apiextensions.CustomResourceValidation', v.schema)}, Subresources:${ptr('apiextensions.CustomResourceSubresources', v.subresources)}, ` +
    `AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}`;
  return new GoLiteral(`[]${type}{${versions.map(one).join(', ')}}`);
}
