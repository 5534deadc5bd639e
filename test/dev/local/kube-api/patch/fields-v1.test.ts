import { describe, expect, it } from 'vitest';
import { decodePE, encodePE, fieldPE } from '../../../../../dev/local/kube-api/patch/fieldpath/path-element.ts';
import {
  fieldSetToFieldsV1,
  fieldsV1Paths,
  fieldsV1ToFieldSet,
} from '../../../../../dev/local/kube-api/patch/index.ts';

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

  // The encoding of a decoded FieldsV1 is kept for the set only when it is exactly what the encoder writes.
  const canonical = {
    'f:metadata': { 'f:labels': { 'f:app': {}, '.': {} } },
    'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { 'f:port': {}, '.': {} } }, 'f:replicas': {} },
  };

  it('keeps a canonical FieldsV1 as it is', () => {
    expect(fieldSetToFieldsV1(fieldsV1ToFieldSet(canonical))).toBe(canonical);
  });

  it.each([
    ['keys out of order', { 'f:spec': canonical['f:spec'], 'f:metadata': canonical['f:metadata'] }],
    ['"." before the children', { ...canonical, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } }],
    ['a leaf written as {".": {}}', { ...canonical, 'f:spec': { ...canonical['f:spec'], 'f:replicas': { '.': {} } } }],
    [
      'a key element with unsorted fields',
      {
        ...canonical,
        'f:spec': { 'f:ports': { 'k:{"protocol":"TCP","port":80}': { 'f:port': {}, '.': {} } }, 'f:replicas': {} },
      },
    ],
    ['an element type it does not know', { ...canonical, 'x:future': {} }],
  ])('re-encodes a FieldsV1 with %s', (_why, fields) => {
    const out = fieldSetToFieldsV1(fieldsV1ToFieldSet(fields));
    expect(out).not.toBe(fields);
    expect(JSON.stringify(out)).toBe(JSON.stringify(canonical));
  });

  it('returns a set itself where set algebra changes nothing', () => {
    const set = fieldsV1ToFieldSet(canonical);
    const disjoint = fieldsV1ToFieldSet({ 'f:status': { 'f:replicas': {} } });
    const empty = fieldsV1ToFieldSet({});
    expect(set.difference(disjoint)).toBe(set);
    expect(set.union(empty)).toBe(set);
    expect(empty.union(set)).toBe(set);
    expect(set.intersection(disjoint).isEmpty()).toBe(true);
    // ...and a new set where it does, the old one unchanged.
    const lessReplicas = set.difference(fieldsV1ToFieldSet({ 'f:spec': { 'f:replicas': {} } }));
    expect(lessReplicas).not.toBe(set);
    expect(fieldsV1Paths(fieldSetToFieldsV1(lessReplicas))).not.toContain('.spec.replicas');
    expect(fieldsV1Paths(fieldSetToFieldsV1(set))).toContain('.spec.replicas');
  });

  it('decodes a FieldsV1 it wrote, or a canonical one it read, by a lookup; any other object afresh', () => {
    const written = fieldSetToFieldsV1(fieldsV1ToFieldSet({ 'f:spec': { 'f:paused': {}, 'f:replicas': {} } }));
    const set = fieldsV1ToFieldSet(written);
    expect(fieldsV1ToFieldSet(written)).toBe(set);
    expect(fieldSetToFieldsV1(set)).toBe(written);
    expect(fieldsV1ToFieldSet(canonical)).toBe(fieldsV1ToFieldSet(canonical));
    // The same content in another object is read again (the cache is by object, never by content)...
    const copy = structuredClone(canonical);
    expect(fieldsV1ToFieldSet(copy)).not.toBe(fieldsV1ToFieldSet(canonical));
    expect(fieldsV1Paths(copy)).toEqual(fieldsV1Paths(canonical));
    // ...and a non-canonical object every time, so what it decodes to is never taken for its encoding.
    const unordered = { 'f:spec': canonical['f:spec'], 'f:metadata': canonical['f:metadata'] };
    expect(fieldsV1ToFieldSet(unordered)).not.toBe(fieldsV1ToFieldSet(unordered));
  });

  it('shares path elements by name up to a bound, then makes fresh ones that still encode and decode right', () => {
    // Names come from clients' objects: past the bound the tables stop growing, seen as fresh elements.
    // (The tables are module state shared with earlier tests in this worker: `metadata` is in them either way.)
    const early = fieldPE('metadata');
    for (let i = 0; i < 10_000; i++) fieldPE(`client-name-${i}`);
    expect(fieldPE('metadata')).toBe(early);
    const late = 'late-name-after-the-bound';
    expect(fieldPE(late)).not.toBe(fieldPE(late));
    expect(encodePE(fieldPE(late))).toBe(`f:${late}`);
    for (let i = 0; i < 10_000; i++) decodePE(`f:decoded-name-${i}`);
    expect(decodePE(`f:${late}`)).not.toBe(decodePE(`f:${late}`));
    expect(decodePE(`f:${late}`)).toEqual({ field: late });
    expect(decodePE('k:{"name":"etcd"}')).toEqual({ key: [['name', 'etcd']] });
  });
});
