import { describe, expect, it } from 'vitest';
import { validateCrd, withCrdDefaults } from '../../../../../dev/local/kube-api/schema/index.ts';

type Json = Record<string, any>;

function crd(overrides: { spec?: Json; metadata?: Json; version?: Json; schema?: Json } = {}): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com', ...overrides.metadata },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: overrides.schema ?? {
              type: 'object',
              properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
            },
          },
          ...overrides.version,
        },
      ],
      ...overrides.spec,
    },
  };
}

const SCHEMA = 'spec.versions[0].schema.openAPIV3Schema';

describe('validateCrd', () => {
  it('accepts a valid CRD', () => {
    expect(validateCrd(crd())).toEqual([]);
  });

  it('requires metadata.name to be <plural>.<group>', () => {
    expect(validateCrd(crd({ metadata: { name: 'widget.example.com' } }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: 'Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group',
      },
    ]);
  });

  it('checks the group', () => {
    expect(validateCrd(crd({ spec: { group: 'example' }, metadata: { name: 'widgets.example' } }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.group',
        message: 'Invalid value: "example": should be a domain with at least one dot',
      },
    ]);
    expect(validateCrd(crd({ spec: { group: '' }, metadata: { name: 'widgets.' } }))).toContainEqual({
      reason: 'FieldValueRequired',
      field: 'spec.group',
      message: 'Required value',
    });
  });

  it('checks the scope', () => {
    expect(validateCrd(crd({ spec: { scope: 'Global' } }))).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.scope',
        message: 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      },
    ]);
    expect(validateCrd(crd({ spec: { scope: undefined } }))).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.scope', message: 'Required value' },
    ]);
  });

  it('checks names, defaulting singular and listKind from kind first', () => {
    const defaulted = withCrdDefaults(crd({ spec: { names: { plural: 'widgets', kind: 'Widget' } } }));
    expect(defaulted.spec.names).toEqual({
      plural: 'widgets',
      kind: 'Widget',
      singular: 'widget',
      listKind: 'WidgetList',
    });
    expect(validateCrd(crd({ spec: { names: { plural: 'widgets', kind: 'Widget' } } }))).toEqual([]);

    expect(validateCrd(crd({ spec: { names: { plural: 'widgets', kind: 'Widget', listKind: 'Widget' } } }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.names.listKind',
        message: 'Invalid value: "Widget": kind and listKind may not be the same',
      },
    ]);
    const causes = validateCrd(
      crd({ metadata: { name: 'Widgets.example.com' }, spec: { names: { plural: 'Widgets', kind: 'Wid_get' } } }),
    );
    expect(causes.map((c) => c.field)).toEqual([
      'metadata.name',
      'spec.names.plural',
      'spec.names.singular',
      'spec.names.kind',
      'spec.names.listKind',
    ]);
    expect(causes[3].message).toBe(
      "Invalid value: \"Wid_get\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
    expect(
      validateCrd(crd({ spec: { names: { kind: 'Widget' } }, metadata: { name: 'x.example.com' } })),
    ).toContainEqual({
      reason: 'FieldValueRequired',
      field: 'spec.names.plural',
      message: 'Required value',
    });
  });

  it('requires exactly one storage version and unique version names', () => {
    const v1 = crd().spec.versions[0];
    const twoStorage = validateCrd(crd({ spec: { versions: [v1, { ...v1, name: 'v2' }] } }));
    expect(twoStorage).toHaveLength(1);
    expect(twoStorage[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'spec.versions' });
    expect(twoStorage[0].message).toMatch(
      /^Invalid value: \[\]apiextensions\.CustomResourceDefinitionVersion\{apiextensions\.CustomResourceDefinitionVersion\{Name:"v1", Served:true, Storage:true, /,
    );
    expect(twoStorage[0].message).toMatch(/: must have exactly one version marked as storage version$/);

    expect(validateCrd(crd({ spec: { versions: [] } }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.versions',
        message:
          'Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version',
      },
    ]);
    const dup = validateCrd(crd({ spec: { versions: [v1, { ...v1, storage: false }] } }));
    expect(dup.map((c) => c.message.replace(/^.*: /, ''))).toEqual(['must contain unique version names']);
    expect(validateCrd(crd({ version: { name: 'V1' } }))[0]).toMatchObject({
      field: 'spec.versions[0].name',
      reason: 'FieldValueInvalid',
    });
  });

  it('requires a schema per version', () => {
    expect(validateCrd(crd({ version: { schema: undefined } }))).toEqual([
      { reason: 'FieldValueRequired', field: SCHEMA, message: 'Required value: schemas are required' },
    ]);
  });

  it('enforces structural schemas with kube field paths', () => {
    const causes = validateCrd(
      crd({ schema: { type: 'object', properties: { spec: { properties: { a: {} } }, list: { type: 'array' } } } }),
    );
    expect(causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[list].items`,
        message: 'Required value: must be specified',
      },
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[spec].properties[a].type`,
        message: 'Required value: must not be empty for specified object fields',
      },
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[spec].type`,
        message: 'Required value: must not be empty for specified object fields',
      },
    ]);
    expect(validateCrd(crd({ schema: { properties: {} } }))).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.type`,
        message: 'Required value: must not be empty at the root',
      },
    ]);
    expect(validateCrd(crd({ schema: { type: 'array', items: { type: 'string' } } }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${SCHEMA}.type`,
        message: 'Invalid value: "array": must be object at the root',
      },
    ]);
  });

  it('allows a missing type where preserve-unknown-fields or int-or-string stand in', () => {
    const schema = {
      type: 'object',
      properties: {
        any: { 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
    };
    expect(validateCrd(crd({ schema }))).toEqual([]);
  });

  it('rejects additionalProperties next to properties, and at the root', () => {
    expect(
      validateCrd(
        crd({
          schema: {
            type: 'object',
            properties: {
              m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
            },
          },
        }),
      ),
    ).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[m].additionalProperties`,
        message: 'Forbidden: additionalProperties and properties are mutual exclusive',
      },
    ]);
    expect(validateCrd(crd({ schema: { type: 'object', additionalProperties: { type: 'string' } } }))).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.additionalProperties`,
        message: 'Forbidden: must not be used at the root',
      },
    ]);
  });

  it('rejects unsupported keywords and a false preserve-unknown-fields', () => {
    const causes = validateCrd(
      crd({
        schema: {
          type: 'object',
          properties: {
            r: { $ref: '#/x' },
            u: { type: 'array', items: { type: 'string' }, uniqueItems: true },
            p: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
          },
        },
      }),
    );
    expect(causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[r].$ref`,
        message: 'Forbidden: $ref is not supported',
      },
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[u].uniqueItems`,
        message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      },
      {
        reason: 'FieldValueInvalid',
        field: `${SCHEMA}.properties[p].x-kubernetes-preserve-unknown-fields`,
        message: 'Invalid value: false: must be true or undefined',
      },
    ]);
  });

  it('checks list-type and list-map-keys', () => {
    const list = (extra: Json) =>
      crd({
        schema: {
          type: 'object',
          properties: {
            l: {
              type: 'array',
              items: { type: 'object', properties: { k: { type: 'string' }, o: { type: 'object' } } },
              ...extra,
            },
          },
        },
      });
    expect(validateCrd(list({ 'x-kubernetes-list-type': 'map' }))).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[l].x-kubernetes-list-map-keys`,
        message: 'Required value: must not be empty if x-kubernetes-list-type is map',
      },
    ]);
    expect(validateCrd(list({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['nope'] }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${SCHEMA}.properties[l].x-kubernetes-list-map-keys`,
        message: 'Invalid value: []interface {}{"nope"}: entries must all be names of item properties',
      },
    ]);
    expect(validateCrd(list({ 'x-kubernetes-list-type': 'bag' }))).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: `${SCHEMA}.properties[l].x-kubernetes-list-type`,
        message: 'Unsupported value: "bag": supported values: "atomic", "set", "map"',
      },
    ]);
    expect(validateCrd(list({ 'x-kubernetes-list-map-keys': ['k'] }))).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[l].x-kubernetes-list-type`,
        message: 'Required value: must be map if x-kubernetes-list-map-keys is non-empty',
      },
    ]);
  });

  it('keeps junctors free of structure and root metadata to name and generateName', () => {
    const causes = validateCrd(
      crd({
        schema: {
          type: 'object',
          properties: {
            metadata: { type: 'object', properties: { labels: { type: 'object' } } },
            x: { type: 'string', anyOf: [{ type: 'string', minLength: 1 }] },
          },
        },
      }),
    );
    expect(causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[metadata]`,
        message:
          'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
      },
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[x].anyOf[0].type`,
        message: 'Forbidden: must be empty to be structural',
      },
    ]);
    expect(
      validateCrd(
        crd({
          schema: {
            type: 'object',
            properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } },
          },
        }),
      ),
    ).toEqual([]);
  });

  it('checks embedded resources', () => {
    expect(
      validateCrd(
        crd({
          schema: { type: 'object', properties: { e: { type: 'object', 'x-kubernetes-embedded-resource': true } } },
        }),
      ),
    ).toEqual([
      {
        reason: 'FieldValueRequired',
        field: `${SCHEMA}.properties[e].properties`,
        message:
          'Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      },
    ]);
  });

  it('checks additionalPrinterColumns', () => {
    const causes = validateCrd(
      crd({
        version: {
          additionalPrinterColumns: [
            { name: '', type: 'float', jsonPath: 'spec.size', format: 'weird' },
            { name: 'Ok', type: 'integer' },
          ],
        },
      }),
    );
    expect(causes).toEqual([
      {
        reason: 'FieldValueRequired',
        field: 'spec.versions[0].additionalPrinterColumns[0].name',
        message: 'Required value',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.versions[0].additionalPrinterColumns[0].type',
        message: 'Invalid value: "float": must be one of boolean,date,integer,number,string',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.versions[0].additionalPrinterColumns[0].format',
        message: 'Invalid value: "weird": must be one of byte,date,date-time,double,float,int32,int64,password',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.versions[0].additionalPrinterColumns[0].JSONPath',
        message: 'Invalid value: "spec.size": must be a simple json path starting with .',
      },
      {
        reason: 'FieldValueRequired',
        field: 'spec.versions[0].additionalPrinterColumns[1].JSONPath',
        message: 'Required value',
      },
    ]);
  });

  it('checks the scale subresource paths', () => {
    const causes = validateCrd(
      crd({
        version: {
          subresources: { status: {}, scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '' } },
        },
      }),
    );
    expect(causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.versions[0].subresources.scale.specReplicasPath',
        message: 'Invalid value: ".status.replicas": should be a json path under .spec',
      },
      {
        reason: 'FieldValueRequired',
        field: 'spec.versions[0].subresources.scale.statusReplicasPath',
        message: 'Required value',
      },
    ]);
    expect(
      validateCrd(
        crd({
          version: {
            subresources: {
              status: {},
              scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
            },
          },
        }),
      ),
    ).toEqual([]);
  });

  it('keeps group and plural immutable on update, and scope and kind once established', () => {
    const old = crd();
    const changed = crd({
      spec: { scope: 'Cluster', group: 'example.org', names: { plural: 'widgets', kind: 'Gadget' } },
      metadata: { name: 'widgets.example.org' },
    });
    expect(validateCrd(changed, old)).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.group', message: 'Invalid value: "example.org": field is immutable' },
    ]);
    const established = { ...old, status: { conditions: [{ type: 'Established', status: 'True' }] } };
    expect(validateCrd(changed, established).map((c) => c.field)).toEqual([
      'spec.scope',
      'spec.names.kind',
      'spec.group',
    ]);
  });

  it('checks the conversion strategy', () => {
    expect(validateCrd(crd({ spec: { conversion: { strategy: 'Magic' } } }))).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.conversion.strategy',
        message: 'Unsupported value: "Magic": supported values: "None", "Webhook"',
      },
    ]);
  });
});
