/**
 * What kube-apiserver checks in a CRD version's openAPIV3Schema: the OpenAPI-level rules of
 * apiextensions' ValidateCustomResourceDefinitionOpenAPISchema (unsupported keywords, list/map
 * extensions) and the structural-schema rules of apiextensions-apiserver/pkg/apiserver/schema
 * (ValidateStructural: a type everywhere, junctors without structure, metadata restrictions). Paths are
 * field.Path strings such as `spec.versions[0].schema.openAPIV3Schema.properties[spec].type`.
 */
import { forbidden, invalid, notSupported, required } from './field-errors.ts';
import type { StatusCause } from './types.ts';

/** A schema node as the client sent it: any field may hold anything until checked. */
type Json = Record<string, unknown>;
type Level = 'root' | 'item' | 'field';

const child = (path: string, name: string) => `${path}.${name}`;
const key = (path: string, k: string) => `${path}[${k}]`;
const index = (path: string, i: number) => `${path}[${i}]`;

export function validateOpenApiSchema(schema: Json, path: string): StatusCause[] {
  const causes = openApiRules(schema, path);
  // Upstream cannot build a structural schema from unsupported keywords and then skips those checks.
  if (causes.some((c) => UNSUPPORTED_KEYWORD.test(c.message))) return causes;
  const structural = structuralInvariants(schema, 'root', path);
  structural.sort((a, b) => (causeText(a) < causeText(b) ? -1 : causeText(a) > causeText(b) ? 1 : 0));
  return [...causes, ...structural];
}

const UNSUPPORTED_KEYWORD =
  /is not supported$|items must be a schema object and not an array$|must be true or undefined$/;

/** field.Error.Error(): the sort key upstream uses for structural errors. */
function causeText(c: StatusCause): string {
  return `${c.field}: ${c.message}`;
}

function openApiRules(s: unknown, path: string): StatusCause[] {
  if (!isObject(s)) return [];
  const out: StatusCause[] = [];
  if (s.id) out.push(forbidden(child(path, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined)
    out.push(forbidden(child(path, 'additionalItems'), 'additionalItems is not supported'));
  if (nonEmpty(s.patternProperties))
    out.push(forbidden(child(path, 'patternProperties'), 'patternProperties is not supported'));
  if (nonEmpty(s.definitions)) out.push(forbidden(child(path, 'definitions'), 'definitions is not supported'));
  if (s.dependencies !== undefined) out.push(forbidden(child(path, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) out.push(forbidden(child(path, '$ref'), '$ref is not supported'));
  if (s.type === 'null') out.push(forbidden(child(path, 'type'), 'type cannot be set to null'));
  if (Array.isArray(s.items))
    out.push(forbidden(child(path, 'items'), 'items must be a schema object and not an array'));
  if (s.uniqueItems === true) {
    out.push(
      forbidden(
        child(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    out.push(invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  if (s.additionalProperties !== undefined && nonEmpty(s.properties)) {
    if (s.additionalProperties === false || isObject(s.additionalProperties)) {
      out.push(
        forbidden(child(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'),
      );
    }
  }
  out.push(...listAndMapRules(s, path));

  if (isObject(s.additionalProperties))
    out.push(...openApiRules(s.additionalProperties, child(path, 'additionalProperties')));
  for (const [k, v] of Object.entries(s.properties ?? {}))
    out.push(...openApiRules(v, key(child(path, 'properties'), k)));
  out.push(...openApiRules(s.not, child(path, 'not')));
  for (const junctor of ['allOf', 'oneOf', 'anyOf']) {
    (Array.isArray(s[junctor]) ? s[junctor] : []).forEach((v: unknown, i: number) => {
      out.push(...openApiRules(v, index(child(path, junctor), i)));
    });
  }
  if (isObject(s.items)) out.push(...openApiRules(s.items, child(path, 'items')));
  return out;
}

function listAndMapRules(s: Json, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const listType = s['x-kubernetes-list-type'];
  const mapKeys: string[] = Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : [];
  if (listType !== undefined && !(['atomic', 'set', 'map'] as unknown[]).includes(listType)) {
    out.push(notSupported(child(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  if (listType !== undefined && s.type !== 'array') {
    out.push(invalid(child(path, 'x-kubernetes-list-type'), listType, 'must only be used on type=array'));
  }
  if (mapKeys.length > 0) {
    if (listType === undefined)
      out.push(
        required(child(path, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'),
      );
    else if (listType !== 'map')
      out.push(
        invalid(
          child(path, 'x-kubernetes-list-type'),
          listType,
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
  }
  if (listType === 'map') {
    if (mapKeys.length === 0)
      out.push(
        required(child(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'),
      );
    const items = s.items;
    if (items === undefined)
      out.push(required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    else if (isObject(items) && items.type !== 'object') {
      out.push(
        invalid(
          child(child(path, 'items'), 'type'),
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    } else if (isObject(items)) {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        // As sent (a property that is not an object reads as JavaScript reads it).
        const prop = (items.properties as Json | null | undefined)?.[k] as Json | undefined;
        if (!prop)
          out.push(
            invalid(child(path, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'),
          );
        else if (prop.type === 'array' || prop.type === 'object') {
          out.push(
            invalid(
              child(key(child(child(path, 'items'), 'properties'), k), 'type'),
              items.type,
              "must be a scalar type if parent array's x-kubernetes-list-type is map",
            ),
          );
        }
        if (seen.has(k))
          out.push(invalid(child(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    if (!s.type) out.push(required(child(path, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else out.push(invalid(child(path, 'type'), s.type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    out.push(notSupported(child(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  return out;
}

const TYPE_REQUIRED: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function structuralInvariants(s: unknown, level: Level, path: string): StatusCause[] {
  if (!isObject(s)) return [];
  const out: StatusCause[] = [];
  const type = s.type ?? '';
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;

  if (type === 'array' && s.items === undefined) out.push(required(child(path, 'items'), 'must be specified'));
  out.push(...structuralInvariants(s.items, 'item', child(path, 'items')));
  for (const [k, v] of Object.entries(s.properties ?? {}))
    out.push(...structuralInvariants(v, 'field', key(child(path, 'properties'), k)));
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
    if (level === 'root') out.push(forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    if (isObject(s.additionalProperties))
      out.push(...structuralInvariants(s.additionalProperties, 'field', child(path, 'additionalProperties')));
  }
  if (intOrString && preserve)
    out.push(
      invalid(
        child(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  if (intOrString && embedded)
    out.push(
      invalid(
        child(path, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );

  out.push(...junctorRules(s, level, path));

  if (embedded && type !== 'object') {
    if (!type) out.push(required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else out.push(invalid(child(path, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && !preserve) {
    out.push(required(child(path, 'type'), TYPE_REQUIRED[level]));
  }
  if (embedded && isObject(s.additionalProperties)) {
    out.push(
      forbidden(child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'),
    );
  }
  if (level === 'root' && type && type !== 'object')
    out.push(invalid(child(path, 'type'), type, 'must be object at the root'));

  const checkMetadata = level === 'root' || embedded;
  // As sent: a value that is not an object reads as JavaScript reads it (the casts only name the shape).
  const props = (s.properties ?? {}) as Record<string, Json | undefined>;
  const propsPath = child(path, 'properties');
  const { kind, apiVersion, metadata } = props;
  if (checkMetadata && kind && kind.type !== 'string')
    out.push(invalid(child(key(propsPath, 'kind'), 'type'), kind.type ?? '', 'must be string'));
  if (checkMetadata && apiVersion && apiVersion.type !== 'string') {
    out.push(invalid(child(key(propsPath, 'apiVersion'), 'type'), apiVersion.type ?? '', 'must be string'));
  }
  if (checkMetadata && metadata && metadata.type !== 'object') {
    out.push(invalid(child(key(propsPath, 'metadata'), 'type'), metadata.type ?? '', 'must be object'));
  }
  if (level === 'root' && metadata && !onlyRestrictsNames(metadata)) {
    out.push(
      forbidden(
        key(propsPath, 'metadata'),
        'must not specify anything other than name and generateName, but metadata is implicitly specified',
      ),
    );
  }
  if (embedded && !preserve && !nonEmpty(s.properties)) {
    out.push(
      required(
        child(path, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
  if (typeof s.pattern === 'string') out.push(...patternRule(s.pattern, path));
  return out;
}

/** Root metadata may only constrain name and generateName (their value validation), nothing else. */
function onlyRestrictsNames(metadata: Json): boolean {
  const { type: _type, properties, ...rest } = metadata;
  if (Object.keys(rest).some((k) => k !== 'default')) return false;
  return Object.keys(properties ?? {}).every((k) => k === 'name' || k === 'generateName');
}

/** The two int-or-string shapes junctors may take; anything else under a junctor must not add structure. */
function isIntOrStringAnyOf(list: unknown): boolean {
  return (
    Array.isArray(list) &&
    list.length === 2 &&
    list.every((b, i) => isObject(b) && Object.keys(b).length === 1 && b.type === (i === 0 ? 'integer' : 'string'))
  );
}

function junctorRules(s: Json, level: Level, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = Array.isArray(s.allOf) && isObject(s.allOf[0]) && isIntOrStringAnyOf(s.allOf[0].anyOf);
  // As before, a junctor that is not an array throws here (forEach): the casts only name what is assumed.
  if (!skipAnyOf)
    ((s.anyOf ?? []) as unknown[]).forEach((v, i) => {
      out.push(...nestedRules(v, false, level, index(child(path, 'anyOf'), i)));
    });
  ((s.allOf ?? []) as unknown[]).forEach((v, i) => {
    out.push(...nestedRules(v, skipFirstAllOfAnyOf && i === 0, level, index(child(path, 'allOf'), i)));
  });
  ((s.oneOf ?? []) as unknown[]).forEach((v, i) => {
    out.push(...nestedRules(v, false, level, index(child(path, 'oneOf'), i)));
  });
  if (isObject(s.not)) out.push(...nestedRules(s.not, false, level, child(path, 'not')));
  return out;
}

function nestedRules(v: unknown, skipAnyOf: boolean, level: Level, path: string): StatusCause[] {
  if (!isObject(v)) return [];
  const out: StatusCause[] = [];
  const nested = { ...v, anyOf: skipAnyOf ? undefined : v.anyOf };
  out.push(...junctorRules(nested, level, path));
  if (isObject(v.items)) out.push(...nestedRules(v.items, false, level, child(path, 'items')));
  for (const [k, p] of Object.entries(v.properties ?? {}))
    out.push(...nestedRules(p, false, 'field', key(child(path, 'properties'), k)));
  if (v.type) out.push(forbidden(child(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined)
    out.push(forbidden(child(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (v.default !== undefined) out.push(forbidden(child(path, 'default'), 'must be undefined to be structural'));
  if (v.title) out.push(forbidden(child(path, 'title'), 'must be empty to be structural'));
  if (v.description) out.push(forbidden(child(path, 'description'), 'must be empty to be structural'));
  if (v.nullable) out.push(forbidden(child(path, 'nullable'), 'must be false to be structural'));
  if (v['x-kubernetes-preserve-unknown-fields'])
    out.push(forbidden(child(path, 'x-kubernetes-preserve-unknown-fields'), 'must be false to be structural'));
  if (v['x-kubernetes-embedded-resource'])
    out.push(forbidden(child(path, 'x-kubernetes-embedded-resource'), 'must be false to be structural'));
  if (v['x-kubernetes-int-or-string'])
    out.push(forbidden(child(path, 'x-kubernetes-int-or-string'), 'must be false to be structural'));
  if (nonEmpty(v['x-kubernetes-list-map-keys']))
    out.push(forbidden(child(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (v['x-kubernetes-list-type'] !== undefined)
    out.push(forbidden(child(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (v.properties && 'metadata' in (v.properties as object))
    out.push(forbidden(key(child(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
  if (typeof v.pattern === 'string') out.push(...patternRule(v.pattern, path));
  return out;
}

function patternRule(pattern: string, path: string): StatusCause[] {
  try {
    new RegExp(pattern, 'u');
    return [];
  } catch (err) {
    const reason = (err as Error).message.replace(/^Invalid regular expression: /, '');
    return [invalid(child(path, 'pattern'), pattern, `must be a valid regular expression, but isn't: ${reason}`)];
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return isObject(v) && Object.keys(v).length > 0;
}
