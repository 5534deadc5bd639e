import { describe, expect, it } from 'vitest';
import { fieldSetToFieldsV1, fieldsV1Paths, fieldsV1ToFieldSet } from '../../../../local/kube-api/patch/index.ts';

describe('FieldsV1 encoding', () => {
  // Shape as kube-apiserver stores it for `kubectl create deployment` (k8s.io docs / real objects).
  const created = {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:spec': {
          'f:containers': {
            'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} },
          },
        },
      },
    },
  };

  it('lists member paths in kube\'s message form, parents marked with "." included', () => {
    expect(fieldsV1Paths(created)).toEqual([
      '.metadata.labels',
      '.metadata.labels.app',
      '.spec.replicas',
      '.spec.selector',
      '.spec.template.spec.containers[name="nginx"]',
      '.spec.template.spec.containers[name="nginx"].image',
      '.spec.template.spec.containers[name="nginx"].name',
    ]);
  });

  it('round-trips, writing children in SMD order and "." after them', () => {
    const out = fieldSetToFieldsV1(fieldsV1ToFieldSet(created));
    expect(JSON.stringify(out)).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{},".":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{"f:image":{},"f:name":{},".":{}}}}}}}',
    );
  });

  it('encodes keys with sorted fields, set values and indexes; fields sort before keys and values', () => {
    const fields = {
      'v:"b"': {},
      'k:{"containerPort":80,"protocol":"TCP"}': { 'f:containerPort': {} },
      'f:z': {},
      'v:"a"': {},
      'i:2': {},
    };
    const out = fieldSetToFieldsV1(fieldsV1ToFieldSet(fields));
    expect(Object.keys(out)).toEqual(['f:z', 'k:{"containerPort":80,"protocol":"TCP"}', 'v:"a"', 'v:"b"', 'i:2']);
    expect(fieldsV1Paths(fields)).toEqual([
      '.z',
      '[containerPort=80,protocol="TCP"].containerPort',
      '[="a"]',
      '[="b"]',
      '[2]',
    ]);
  });

  it('drops element types it does not know, as SMD does', () => {
    expect(fieldsV1Paths({ 'x:future': {}, 'f:a': {} })).toEqual(['.a']);
  });
});
