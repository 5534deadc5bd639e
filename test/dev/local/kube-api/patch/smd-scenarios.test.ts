/**
 * Scenarios from structured-merge-diff's merge/multiple_appliers_test.go, replayed through our apply and
 * update paths: the resulting object and every manager's fields must match upstream's expectations.
 */
import { describe, expect, it } from 'vitest';
import {
  fieldsV1Paths,
  type JsonObject,
  type ManagedFieldsEntry,
  serverSideApply,
  updateManagedFields,
} from '../../../../../dev/local/kube-api/patch/index.ts';
import type { SchemaNode } from '../../../../../dev/local/kube-api/schema/types.ts';

const str: SchemaNode = { type: 'string' };
const schema: SchemaNode = {
  type: 'object',
  properties: {
    listOfLists: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        properties: { name: str, value: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' } },
      },
    },
    struct: {
      type: 'object',
      properties: { name: str, scalarField: str, complexField: { type: 'object', properties: { name: str } } },
    },
  },
};

type Op = { apply: string; object: JsonObject } | { update: string; object: JsonObject };

function replay(ops: Op[]): { object: JsonObject; managed: Record<string, string[]> } {
  let live: JsonObject | undefined;
  let second = 0;
  for (const op of ops) {
    const now = `2026-01-01T00:00:${String(second++).padStart(2, '0')}Z`;
    const full = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, ...op.object };
    if ('apply' in op) {
      live = serverSideApply({ live, applied: full, manager: op.apply, force: false, schema, now });
    } else {
      const after = { ...full, metadata: { ...(live?.metadata as object) } };
      const managedFields = updateManagedFields({ before: live, after, manager: op.update, schema, now });
      live = { ...after, metadata: { ...after.metadata, managedFields } };
    }
  }
  const { apiVersion, kind, metadata, ...object } = live!;
  const managed: Record<string, string[]> = {};
  for (const e of ((metadata as Record<string, unknown>).managedFields ?? []) as ManagedFieldsEntry[])
    managed[e.manager] = fieldsV1Paths(e.fieldsV1);
  return { object, managed };
}

describe('structured-merge-diff multiple appliers scenarios', () => {
  it('remove_one_keep_one', () => {
    const r = replay([
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } },
      { apply: 'apply-two', object: { listOfLists: [{ name: 'c' }, { name: 'd' }] } },
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }] } },
    ]);
    expect(r.object).toEqual({ listOfLists: [{ name: 'a' }, { name: 'c' }, { name: 'd' }] });
    expect(r.managed).toEqual({
      'apply-one': ['.listOfLists[name="a"]', '.listOfLists[name="a"].name'],
      'apply-two': [
        '.listOfLists[name="c"]',
        '.listOfLists[name="c"].name',
        '.listOfLists[name="d"]',
        '.listOfLists[name="d"].name',
      ],
    });
  });

  it('unset_scalar_shared_with_updater', () => {
    const r = replay([
      { update: 'updater', object: { struct: { name: 'a', scalarField: 'a' } } },
      { apply: 'applier', object: { struct: { name: 'a', scalarField: 'a' } } },
      { apply: 'applier', object: { struct: { name: 'a' } } },
    ]);
    expect(r.object).toEqual({ struct: { name: 'a', scalarField: 'a' } });
    expect(r.managed).toEqual({
      applier: ['.struct.name'],
      updater: ['.struct', '.struct.name', '.struct.scalarField'],
    });
  });

  it('updater_claims_field', () => {
    const r = replay([
      { apply: 'applier', object: { struct: { name: 'a', scalarField: 'a' } } },
      { update: 'updater', object: { struct: { name: 'a', scalarField: 'b' } } },
    ]);
    expect(r.object).toEqual({ struct: { name: 'a', scalarField: 'b' } });
    expect(r.managed).toEqual({ applier: ['.struct.name'], updater: ['.struct.scalarField'] });
  });

  it('unset_complex_sole_owner and unset_complex_shared_with_applier', () => {
    const sole = replay([
      { apply: 'apply-one', object: { struct: { name: 'a', complexField: { name: 'b' } } } },
      { apply: 'apply-one', object: { struct: { name: 'a' } } },
    ]);
    expect(sole.object).toEqual({ struct: { name: 'a' } });
    const shared = replay([
      { apply: 'apply-one', object: { struct: { name: 'a', complexField: { name: 'b' } } } },
      { apply: 'apply-two', object: { struct: { complexField: { name: 'b' } } } },
      { apply: 'apply-one', object: { struct: { name: 'a' } } },
    ]);
    expect(shared.object).toEqual({ struct: { name: 'a', complexField: { name: 'b' } } });
    expect(shared.managed).toEqual({ 'apply-one': ['.struct.name'], 'apply-two': ['.struct.complexField.name'] });
  });

  it('remove_one_keep_one_with_dangling_subitem', () => {
    const r = replay([
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }, { name: 'b', value: ['c'] }] } },
      { apply: 'apply-two', object: { listOfLists: [{ name: 'b', value: ['d'] }] } },
      { update: 'controller', object: { listOfLists: [{ name: 'a' }, { name: 'b', value: ['c', 'd', 'e'] }] } },
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }] } },
    ]);
    expect(r.object).toEqual({ listOfLists: [{ name: 'a' }, { name: 'b', value: ['d', 'e'] }] });
    expect(r.managed).toEqual({
      'apply-one': ['.listOfLists[name="a"]', '.listOfLists[name="a"].name'],
      'apply-two': ['.listOfLists[name="b"]', '.listOfLists[name="b"].name', '.listOfLists[name="b"].value[="d"]'],
      controller: ['.listOfLists[name="b"].value[="e"]'],
    });
  });

  it('remove_one_with_dangling_subitem_keep_one', () => {
    const r = replay([
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }, { name: 'b', value: ['c'] }] } },
      { apply: 'apply-two', object: { listOfLists: [{ name: 'a', value: ['b'] }] } },
      {
        update: 'controller',
        object: {
          listOfLists: [
            { name: 'a', value: ['b'] },
            { name: 'b', value: ['c', 'd'] },
          ],
        },
      },
      { apply: 'apply-one', object: { listOfLists: [{ name: 'a' }] } },
    ]);
    expect(r.object).toEqual({ listOfLists: [{ name: 'a', value: ['b'] }] });
    expect(r.managed['apply-one']).toEqual(['.listOfLists[name="a"]', '.listOfLists[name="a"].name']);
    expect(r.managed.controller).toBeUndefined();
  });

  it('struct_apply_update_dict_null: a null struct in the configuration keeps what others own', () => {
    const r = replay([
      { apply: 'default', object: { struct: { name: 'a' } } },
      { update: 'controller', object: { struct: { name: 'a', scalarField: '1' } } },
      { apply: 'default', object: { struct: null } },
    ]);
    expect(r.object).toEqual({ struct: { scalarField: '1' } });
    expect(r.managed.default).toEqual(['.struct']);
  });

  it('struct_apply_remove_dangling: the struct empties out (SMD leaves null; kube drops it)', () => {
    const r = replay([
      { apply: 'default', object: { struct: { name: 'a' } } },
      { apply: 'default', object: { struct: null } },
    ]);
    expect(r.object).toEqual({});
    expect(r.managed).toEqual({ default: ['.struct'] });
  });

  it('struct_apply_update_remove_all and struct_apply_update_took_over', () => {
    const removeAll = replay([
      { apply: 'default', object: { struct: { name: 'a' } } },
      { update: 'controller', object: { struct: { name: 'a', scalarField: '1' } } },
      { apply: 'default', object: {} },
    ]);
    expect(removeAll.object).toEqual({ struct: { scalarField: '1' } });
    const tookOver = replay([
      { apply: 'default', object: { struct: { name: 'a' } } },
      { update: 'controller', object: { struct: { name: 'b', scalarField: '1' } } },
      { apply: 'default', object: { struct: null } },
    ]);
    expect(tookOver.object).toEqual({ struct: { name: 'b', scalarField: '1' } });
  });
});
