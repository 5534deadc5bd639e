import { describe, expect, it } from 'vitest';
import {
  builtinSchema,
  crdVersionSchema,
  validateAgainstSchema,
} from '../../../../../dev/local/kube-api/schema/index.ts';
import type { SchemaNode } from '../../../../../dev/local/kube-api/schema/types.ts';

const specSchema: SchemaNode = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['replicas'],
      properties: {
        replicas: { type: 'integer', minimum: 1, maximum: 10 },
        ratio: { type: 'number', exclusiveMaximum: true, maximum: 1 },
        step: { type: 'integer', multipleOf: 5 },
        name: { type: 'string', maxLength: 5, minLength: 2, pattern: '^[a-z]+$' },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        level: { type: 'integer', enum: [1, 2] },
        when: { type: 'string', format: 'date-time' },
        port: { 'x-kubernetes-int-or-string': true },
        note: { type: 'string', nullable: true },
        items: {
          type: 'array',
          maxItems: 2,
          minItems: 1,
          items: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
        },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        entries: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 },
        flag: { type: 'boolean' },
      },
    },
  },
};

function causesFor(spec: Record<string, unknown>) {
  return validateAgainstSchema(
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec },
    specSchema,
    { fieldValidation: 'Strict' },
  ).causes;
}

describe('validateAgainstSchema value validation', () => {
  it('accepts a valid object', () => {
    expect(
      causesFor({
        replicas: 3,
        ratio: 0.5,
        step: 10,
        name: 'abc',
        mode: 'fast',
        level: 2,
        when: '2024-01-02T03:04:05Z',
        port: 'http',
        note: null,
        items: [{ id: 'a' }],
        tags: ['a', 'b'],
        entries: [{ name: 'a' }, { name: 'b' }],
        labels: { a: 'b' },
        flag: false,
      }),
    ).toEqual([]);
    expect(causesFor({ replicas: 1, port: 8080 })).toEqual([]);
  });

  it('reports type errors as kube-apiserver words them', () => {
    expect(causesFor({ replicas: 'three' })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      },
    ]);
    expect(causesFor({ replicas: 1.5 })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: "number": spec.replicas in body must be of type integer: "number"',
      },
    ]);
    expect(causesFor({ replicas: 2, flag: 'yes', port: true, labels: { a: 1 } })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.flag',
        message: 'Invalid value: "string": spec.flag in body must be of type boolean: "string"',
      },
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.port',
        message: 'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      },
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.labels.a',
        message: 'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
      },
    ]);
    expect(causesFor({ replicas: 2, tags: ['a', null] })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.tags[1]',
        message: 'Invalid value: "null": spec.tags[1] in body must be of type string: "null"',
      },
    ]);
  });

  it('reports required fields, in arrays too', () => {
    expect(causesFor({ items: [{ id: 'a' }, {}] })).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.items[1].id', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'spec.replicas', message: 'Required value' },
    ]);
  });

  it('reports numeric bounds', () => {
    expect(causesFor({ replicas: 0, ratio: 1, step: 7 })).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.ratio',
        message: 'Invalid value: 1: spec.ratio in body should be less than 1',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.step',
        message: 'Invalid value: 7: spec.step in body should be a multiple of 5',
      },
    ]);
    expect(causesFor({ replicas: 11 })).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: 'Invalid value: 11: spec.replicas in body should be less than or equal to 10',
      },
    ]);
  });

  it('reports string length, pattern and format', () => {
    expect(causesFor({ replicas: 1, name: 'abcdefg' })).toEqual([
      { reason: 'FieldValueTooLong', field: 'spec.name', message: 'Too long: may not be more than 5 bytes' },
    ]);
    expect(causesFor({ replicas: 1, name: 'A' })).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.name',
        message: 'Invalid value: "A": spec.name in body should be at least 2 chars long',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.name',
        message: 'Invalid value: "A": spec.name in body should match \'^[a-z]+$\'',
      },
    ]);
    expect(causesFor({ replicas: 1, when: 'yesterday' })).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.when',
        message: 'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
      },
    ]);
  });

  it('reports enum violations with the supported values', () => {
    expect(causesFor({ replicas: 1, mode: 'medium', level: 3 })).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.mode',
        message: 'Unsupported value: "medium": supported values: "fast", "slow"',
      },
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.level',
        message: 'Unsupported value: 3: supported values: "1", "2"',
      },
    ]);
  });

  it('reports item and property counts', () => {
    expect(
      causesFor({ replicas: 1, items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], labels: { a: 'x', b: 'y' } }),
    ).toEqual([
      { reason: 'FieldValueTooMany', field: 'spec.items', message: 'Too many: 3: must have at most 2 items' },
      { reason: 'FieldValueTooMany', field: 'spec.labels', message: 'Too many: 2: must have at most 1 items' },
    ]);
    expect(causesFor({ replicas: 1, items: [] })).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.items',
        message: 'Invalid value: 0: spec.items in body should have at least 1 items',
      },
    ]);
  });

  it('reports duplicates in list-type set and map lists', () => {
    expect(
      causesFor({
        replicas: 1,
        tags: ['a', 'b', 'a'],
        entries: [
          { name: 'x', v: 1 },
          { name: 'x', v: 2 },
        ],
      }),
    ).toEqual([
      { reason: 'FieldValueDuplicate', field: 'spec.tags[2]', message: 'Duplicate value: "a"' },
      {
        reason: 'FieldValueDuplicate',
        field: 'spec.entries[1]',
        message: 'Duplicate value: map[string]interface {}{"name":"x"}',
      },
    ]);
  });

  it('does not apply OpenAPI-only list rules to built-in kinds (kube validates those in Go)', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i',
            env: [
              { name: 'A', value: '1' },
              { name: 'A', value: '2' },
            ],
          },
        ],
      },
    };
    expect(validateAgainstSchema(pod, builtinSchema('', 'v1', 'Pod')!, { fieldValidation: 'Strict' }).causes).toEqual(
      [],
    );
  });

  it('accepts numbers for quantities and validates built-in types', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: null },
      spec: {
        containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: 0.5, memory: '64Mi' } } }],
        terminationGracePeriodSeconds: 'soon',
      },
      status: {},
    };
    // `creationTimestamp: null` is what kubectl itself writes in generated manifests: Go decodes it as zero.
    const result = validateAgainstSchema(pod, builtinSchema('', 'v1', 'Pod')!, { fieldValidation: 'Strict' });
    expect(result.causes).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.terminationGracePeriodSeconds',
        message:
          'Invalid value: "string": spec.terminationGracePeriodSeconds in body must be of type integer: "string"',
      },
    ]);
    expect(result.pruned.metadata).toEqual({ name: 'p' });
  });

  it('validates custom resources against crdVersionSchema, which constrains metadata.name only as the CRD says', () => {
    const crd = {
      spec: {
        group: 'example.com',
        versions: [
          {
            name: 'v1',
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 3 } } },
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
                },
              },
            },
          },
        ],
      },
    };
    const schema = crdVersionSchema(crd, 'v1')!;
    expect(crdVersionSchema(crd, 'v2')).toBeUndefined();
    expect(schema.properties?.metadata.properties?.labels).toBeDefined();
    const result = validateAgainstSchema(
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'toolong', labels: { a: 'b' }, annotations: { x: 'y' } },
        spec: { size: 1 },
      },
      schema,
      { fieldValidation: 'Strict' },
    );
    expect(result.causes).toEqual([
      { reason: 'FieldValueTooLong', field: 'metadata.name', message: 'Too long: may not be more than 3 bytes' },
    ]);
    expect(result.unknownFields).toEqual([]);
  });
});
