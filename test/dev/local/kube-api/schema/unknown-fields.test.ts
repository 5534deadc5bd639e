import { describe, expect, it } from 'vitest';
import {
  builtinSchema,
  crdVersionSchema,
  strictDecodingError,
  unknownFieldWarnings,
  validateAgainstSchema,
} from '../../../../../dev/local/kube-api/schema/index.ts';
import type { SchemaNode } from '../../../../../dev/local/kube-api/schema/types.ts';

const crd = {
  spec: {
    versions: [
      {
        name: 'v1',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { type: 'integer', default: 1 },
                  mode: { type: 'string', default: 'fast' },
                  note: { type: 'string', nullable: true },
                  free: {
                    type: 'object',
                    'x-kubernetes-preserve-unknown-fields': true,
                    properties: { known: { type: 'integer' } },
                  },
                  template: {
                    type: 'object',
                    'x-kubernetes-embedded-resource': true,
                    properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
                  },
                  raw: {
                    type: 'object',
                    'x-kubernetes-embedded-resource': true,
                    'x-kubernetes-preserve-unknown-fields': true,
                  },
                  byName: {
                    type: 'object',
                    additionalProperties: { type: 'object', properties: { v: { type: 'string' } } },
                  },
                  list: { type: 'array', items: { type: 'object', properties: { v: { type: 'string' } } } },
                },
              },
            },
          },
        },
      },
    ],
  },
};
const schema = crdVersionSchema(crd, 'v1') as SchemaNode;

const cr = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'w' }) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata,
  spec,
});

describe('unknown fields', () => {
  it('are listed with kube field paths and pruned', () => {
    const result = validateAgainstSchema(
      { ...cr({ size: 2, extra: true, list: [{ v: 'a', w: 1 }], byName: { k: { v: 'x', z: 1 } } }), top: 1 },
      schema,
      { fieldValidation: 'Strict' },
    );
    expect(result.unknownFields).toEqual(['spec.extra', 'spec.list[0].w', 'spec.byName[k].z', 'top']);
    expect(result.pruned).toEqual(cr({ size: 2, mode: 'fast', list: [{ v: 'a' }], byName: { k: { v: 'x' } } }));
    expect(result.causes).toEqual([]);
  });

  it('copy only the path that changed: a clean object comes back as itself, the input is never changed', () => {
    const clean = cr({ size: 2, mode: 'slow', list: [{ v: 'a' }, { v: 'b' }], byName: { k: { v: 'x' } } });
    expect(validateAgainstSchema(clean, schema, { fieldValidation: 'Strict' }).pruned).toBe(clean);

    const input = cr({ size: 2, mode: 'slow', list: [{ v: 'a' }, { v: 'b', w: 1 }], byName: { k: { v: 'x' } } });
    const before = structuredClone(input);
    type Spec = { list: object[]; byName: object };
    const pruned = validateAgainstSchema(input, schema, { fieldValidation: 'Strict' }).pruned as typeof input & {
      spec: Spec;
    };
    const inputSpec = input.spec as Spec;
    expect(input).toEqual(before);
    expect(pruned.spec.list).toEqual([{ v: 'a' }, { v: 'b' }]);
    // The pruned item and the objects on its path are new; what nothing touched is shared.
    expect(pruned).not.toBe(input);
    expect(pruned.spec.list).not.toBe(inputSpec.list);
    expect(pruned.spec.list[0]).toBe(inputSpec.list[0]);
    expect(pruned.spec.byName).toBe(inputSpec.byName);
    expect(pruned.metadata).toBe(input.metadata);
  });

  it('are kept under x-kubernetes-preserve-unknown-fields, while known fields there are still validated', () => {
    const result = validateAgainstSchema(cr({ free: { known: 'x', anything: { deep: [1] } } }), schema, {
      fieldValidation: 'Strict',
    });
    expect(result.unknownFields).toEqual([]);
    expect((result.pruned.spec as Record<string, unknown>).free).toEqual({ known: 'x', anything: { deep: [1] } });
    expect(result.causes).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        field: 'spec.free.known',
        message: 'Invalid value: "string": spec.free.known in body must be of type integer: "string"',
      },
    ]);
  });

  it('treat embedded resources like a resource root: TypeMeta required, metadata as ObjectMeta', () => {
    const result = validateAgainstSchema(
      cr({
        template: { metadata: { labels: { a: 'b' }, bogus: 1 }, spec: { a: 'x', b: 'y' } },
        raw: { apiVersion: 'v1', kind: 'Pod', spec: { anything: 1 } },
      }),
      schema,
      { fieldValidation: 'Strict' },
    );
    expect(result.unknownFields).toEqual(['spec.template.metadata.bogus', 'spec.template.spec.b']);
    expect(result.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.template.apiVersion', message: 'Required value: must not be empty' },
      { reason: 'FieldValueRequired', field: 'spec.template.kind', message: 'Required value: must not be empty' },
    ]);
    expect((result.pruned.spec as Record<string, any>).raw).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { anything: 1 },
    });
  });

  it('in metadata are reported for custom and built-in kinds alike', () => {
    expect(
      validateAgainstSchema(cr({}, { name: 'w', lables: { a: 'b' } }), schema, { fieldValidation: 'Warn' })
        .unknownFields,
    ).toEqual(['metadata.lables']);
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', nmespace: 'x' },
      data: { a: 'b' },
      date: {},
    };
    const result = validateAgainstSchema(cm, builtinSchema('', 'v1', 'ConfigMap')!, { fieldValidation: 'Strict' });
    expect(result.unknownFields).toEqual(['metadata.nmespace', 'date']);
    expect(result.pruned).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
  });

  it('are still pruned but not listed under fieldValidation=Ignore', () => {
    const result = validateAgainstSchema(cr({ extra: 1 }), schema, { fieldValidation: 'Ignore' });
    expect(result.unknownFields).toEqual([]);
    expect(result.pruned.spec).toEqual({ size: 1, mode: 'fast' });
  });

  it('do not include nulls, which are dropped unless nullable, and defaults fill absent fields', () => {
    const result = validateAgainstSchema(cr({ size: null, note: null, mode: 'slow' }), schema, {
      fieldValidation: 'Strict',
    });
    expect(result.causes).toEqual([]);
    expect(result.pruned.spec).toEqual({ size: 1, note: null, mode: 'slow' });
  });

  it('produce kube-apiserver messages', () => {
    expect(strictDecodingError('Deployment', ['spec.foo', 'spec.template.spec.containers[0].bar'])).toBe(
      'strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers[0].bar"',
    );
    expect(strictDecodingError('Deployment', ['spec.foo'], 'v1')).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo"',
    );
    expect(unknownFieldWarnings(['spec.foo', 'metadata.bar'])).toEqual([
      'unknown field "spec.foo"',
      'unknown field "metadata.bar"',
    ]);
  });
});
