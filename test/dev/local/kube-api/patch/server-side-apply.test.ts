import { describe, expect, it } from 'vitest';
import {
  ApplyConflictError,
  applyConflictStatus,
  fieldsV1Paths,
  type JsonObject,
  type ManagedFieldsEntry,
  PatchError,
  PatchInternalError,
  serverSideApply,
  updateManagedFields,
} from '../../../../../dev/local/kube-api/patch/index.ts';
import { configMapSchema, deploymentSchema } from './schemas.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const T2 = '2026-01-01T00:02:00Z';

type Obj = Record<string, any>;

function deployment(spec: Obj = {}, metadata: Obj = {}): JsonObject {
  const obj: JsonObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', ...metadata },
  };
  if (Object.keys(spec).length > 0) obj.spec = spec;
  return obj;
}
const containers = (...cs: Obj[]) => ({ template: { spec: { containers: cs } } });

function apply(
  live: JsonObject | undefined,
  applied: JsonObject,
  manager: string,
  opts: { force?: boolean; now?: string; subresource?: string } = {},
) {
  return serverSideApply({
    live,
    applied,
    manager,
    force: opts.force ?? false,
    schema: deploymentSchema,
    subresource: opts.subresource,
    now: opts.now ?? T1,
  });
}
const entries = (obj: JsonObject) => ((obj.metadata as Obj).managedFields ?? []) as ManagedFieldsEntry[];
const entryOf = (obj: JsonObject, manager: string) => entries(obj).find((e) => e.manager === manager);
const pathsOf = (obj: JsonObject, manager: string) => fieldsV1Paths(entryOf(obj, manager)?.fieldsV1 ?? {});

function conflictOf(fn: () => unknown): ApplyConflictError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApplyConflictError) return e;
    throw e;
  }
  throw new Error('expected an apply conflict');
}

describe('server-side apply: ownership encoding', () => {
  it('records the kube docs ConfigMap example exactly', () => {
    const applied = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'test-cm', namespace: 'default', labels: { 'test-label': 'test' } },
      data: { key: 'some value' },
    };
    const out = serverSideApply({
      live: undefined,
      applied,
      manager: 'kubectl',
      force: false,
      schema: configMapSchema,
      now: '2010-10-10T00:00:00Z',
    });
    expect(out).toEqual({
      ...applied,
      metadata: {
        ...applied.metadata,
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            apiVersion: 'v1',
            time: '2010-10-10T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:metadata': { 'f:labels': { 'f:test-label': {} } }, 'f:data': { 'f:key': {} } },
          },
        ],
      },
    });
  });

  it('encodes list items by key (with the protocol default), sets by value, atomic lists whole; never name or kind', () => {
    const out = apply(
      undefined,
      deployment(
        {
          replicas: 1,
          selector: { matchLabels: { app: 'web' } },
          ...containers({ name: 'etcd', image: 'etcd:1', args: ['--x'], ports: [{ containerPort: 2379 }] }),
        },
        { finalizers: ['example.com/f'] },
      ),
      'mgr',
    );
    expect(entryOf(out, 'mgr')?.fieldsV1).toEqual({
      'f:metadata': { 'f:finalizers': { 'v:"example.com/f"': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"etcd"}': {
                '.': {},
                'f:name': {},
                'f:image': {},
                'f:args': {},
                'f:ports': { 'k:{"containerPort":2379,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
          },
        },
      },
    });
    expect(out.spec).toEqual({
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      ...containers({ name: 'etcd', image: 'etcd:1', args: ['--x'], ports: [{ containerPort: 2379 }] }),
    });
  });

  it('an empty map or a null in the configuration is owned as a leaf', () => {
    const out = apply(undefined, { ...deployment(), spec: { paused: null, strategy: {} } }, 'm');
    expect(pathsOf(out, 'm')).toEqual(['.spec.paused', '.spec.strategy']);
    expect(out.spec).toEqual({ strategy: {} });
  });

  it('without type info lists are atomic and maps granular', () => {
    const applied = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't' },
      spec: { list: [{ a: 1 }], map: { k: 'v' } },
    };
    const out = serverSideApply({ live: undefined, applied, manager: 'm', force: false, schema: undefined, now: T0 });
    expect(pathsOf(out, 'm')).toEqual(['.spec', '.spec.list', '.spec.map', '.spec.map.k']);
  });

  it('rejects applied managedFields (400) and invalid list items the way kube does (500)', () => {
    expect(() => apply(undefined, deployment({}, { managedFields: [] }), 'm')).toThrow(
      expect.objectContaining({ status: 400, message: 'metadata.managedFields must be nil' }),
    );
    expect(() => apply(undefined, deployment(containers({ image: 'x' })), 'm')).toThrow(
      new PatchInternalError(
        'failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
      ),
    );
    expect(() => apply(undefined, deployment({ bogus: 1 }), 'm')).toThrow('.spec.bogus: field not declared in schema');
    expect(() => apply(undefined, deployment({}), 'm')).not.toThrow(PatchError);
  });
});

describe('server-side apply: managers', () => {
  const base = deployment({ replicas: 2, ...containers({ name: 'etcd', image: 'etcd:1' }) });
  const created = apply(undefined, base, 'alice', { now: T0 });

  it('a second manager applying the same value shares ownership without conflict', () => {
    const out = apply(created, deployment({ replicas: 2 }), 'bob');
    expect(pathsOf(out, 'alice')).toContain('.spec.replicas');
    expect(pathsOf(out, 'bob')).toEqual(['.spec.replicas']);
    expect(out.spec).toEqual(base.spec);
  });

  it('a different value conflicts, naming manager and field; force takes the field over', () => {
    const err = conflictOf(() => apply(created, deployment({ replicas: 5 }), 'bob'));
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
    expect(err.conflicts).toMatchObject([{ manager: 'alice', field: '.spec.replicas' }]);
    expect(applyConflictStatus(err)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas',
      reason: 'Conflict',
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }],
      },
      code: 409,
    });

    const forced = apply(created, deployment({ replicas: 5 }), 'bob', { force: true });
    expect((forced.spec as Obj).replicas).toBe(5);
    expect(pathsOf(forced, 'bob')).toEqual(['.spec.replicas']);
    expect(pathsOf(forced, 'alice')).not.toContain('.spec.replicas');
  });

  it('lists several conflicts grouped by manager, as kube formats them', () => {
    const err = conflictOf(() =>
      apply(created, deployment({ replicas: 5, ...containers({ name: 'etcd', image: 'etcd:2' }) }), 'bob'),
    );
    expect(err.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="etcd"].image',
    );
  });

  it('a field written by an Update manager conflicts too, printed with its API version', () => {
    const live = deployment({ replicas: 1 });
    const withUpdater = {
      ...live,
      metadata: {
        ...(live.metadata as Obj),
        managedFields: updateManagedFields({
          before: undefined,
          after: live,
          manager: 'kubectl-create',
          schema: deploymentSchema,
          now: T0,
        }),
      },
    };
    const err = conflictOf(() => apply(withUpdater, deployment({ replicas: 3 }), 'ssa'));
    expect(err.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-create" using apps/v1: .spec.replicas',
    );
    const forced = apply(withUpdater, deployment({ replicas: 3 }), 'ssa', { force: true });
    expect(entryOf(forced, 'kubectl-create')).toBeUndefined(); // its only field was taken, so the entry is dropped
    expect(entries(forced).map((e) => [e.manager, e.operation])).toEqual([['ssa', 'Apply']]);
  });

  it('a field the applier drops is removed when nobody else owns it, and only disowned otherwise', () => {
    const labelled = apply(undefined, deployment({}, { labels: { a: '1', b: '2' } }), 'alice', { now: T0 });
    const dropped = apply(labelled, deployment({}, { labels: { a: '1' } }), 'alice');
    expect((dropped.metadata as Obj).labels).toEqual({ a: '1' });

    const shared = apply(labelled, deployment({}, { labels: { b: '2' } }), 'bob');
    const disowned = apply(shared, deployment({}, { labels: { a: '1' } }), 'alice', { now: T2 });
    expect((disowned.metadata as Obj).labels).toEqual({ a: '1', b: '2' });
    expect(pathsOf(disowned, 'alice')).toEqual(['.metadata.labels.a']);
    expect(pathsOf(disowned, 'bob')).toEqual(['.metadata.labels.b']);
  });

  it('map-lists merge per key: each applier keeps its own containers', () => {
    const withSidecar = apply(created, deployment(containers({ name: 'sidecar', image: 'busybox' })), 'bob');
    expect(((withSidecar.spec as Obj).template.spec.containers as Obj[]).map((c) => c.name)).toEqual([
      'etcd',
      'sidecar',
    ]);
    expect(pathsOf(withSidecar, 'bob')).toEqual([
      '.spec.template.spec.containers[name="sidecar"]',
      '.spec.template.spec.containers[name="sidecar"].image',
      '.spec.template.spec.containers[name="sidecar"].name',
    ]);
    const removedSidecar = apply(withSidecar, deployment({ replicas: 2 }), 'bob');
    expect(((removedSidecar.spec as Obj).template.spec.containers as Obj[]).map((c) => c.name)).toEqual(['etcd']);
    expect(pathsOf(removedSidecar, 'bob')).toEqual(['.spec.replicas']);
    expect(pathsOf(removedSidecar, 'alice')).toContain('.spec.template.spec.containers[name="etcd"].image');
  });

  it('atomic lists are owned whole: a different list conflicts at the list', () => {
    const withArgs = apply(undefined, deployment(containers({ name: 'etcd', args: ['--a', '--b'] })), 'alice', {
      now: T0,
    });
    const err = conflictOf(() => apply(withArgs, deployment(containers({ name: 'etcd', args: ['--c'] })), 'bob'));
    expect(err.conflicts.map((c) => c.field)).toEqual(['.spec.template.spec.containers[name="etcd"].args']);
  });

  it('status subresource applies get their own entry and change only status', () => {
    const out = apply(
      created,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { replicas: 9 },
        status: { replicas: 2, conditions: [{ type: 'Available', status: 'True' }] },
      },
      'ctrl',
      { subresource: 'status' },
    );
    expect((out.spec as Obj).replicas).toBe(2);
    expect(out.status).toEqual({ replicas: 2, conditions: [{ type: 'Available', status: 'True' }] });
    expect(entryOf(out, 'ctrl')).toMatchObject({ operation: 'Apply', subresource: 'status' });
    expect(pathsOf(out, 'ctrl')).toEqual([
      '.status.conditions[type="Available"]',
      '.status.conditions[type="Available"].status',
      '.status.conditions[type="Available"].type',
      '.status.replicas',
    ]);
  });

  it('the main resource with resetFields [status] never takes status', () => {
    const out = serverSideApply({
      live: created,
      applied: deployment({ replicas: 2 }, {}) && { ...deployment({ replicas: 2 }), status: { replicas: 7 } },
      manager: 'alice',
      force: false,
      schema: deploymentSchema,
      now: T1,
      resetFields: [['status']],
    });
    expect(out.status).toBeUndefined();
    expect(pathsOf(out, 'alice')).toEqual(['.spec.replicas']);
  });

  it('an object without managedFields is first credited to before-first-apply', () => {
    const untracked = deployment({ replicas: 1, paused: true });
    const err = conflictOf(() => apply(untracked, deployment({ replicas: 4 }), 'ssa'));
    expect(err.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas',
    );
    const same = apply(untracked, deployment({ replicas: 1 }), 'ssa');
    expect(pathsOf(same, 'before-first-apply')).toEqual(['.spec.paused', '.spec.replicas']);
  });

  it('a repeated identical apply keeps the old timestamps (no spurious write)', () => {
    const again = apply(created, base, 'alice', { now: T2 });
    expect(again).toEqual(created);
    const changed = apply(
      created,
      deployment({ replicas: 3, ...containers({ name: 'etcd', image: 'etcd:1' }) }),
      'alice',
      { now: T2 },
    );
    expect(entryOf(changed, 'alice')?.time).toBe(T2);
  });

  it('kubectl upgrading from client-side apply may take fields its last-applied annotation describes', () => {
    const lastApplied = `${JSON.stringify(deployment({ replicas: 1 }))}\n`;
    const live = deployment(
      { replicas: 1 },
      { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
    );
    live.metadata = {
      ...(live.metadata as Obj),
      managedFields: updateManagedFields({
        before: undefined,
        after: live,
        manager: 'kubectl-client-side-apply',
        schema: deploymentSchema,
        now: T0,
      }),
    };
    expect(() => apply(live, deployment({ replicas: 2 }), 'someone-else')).toThrow(ApplyConflictError);
    const out = apply(live, deployment({ replicas: 2 }), 'kubectl');
    expect((out.spec as Obj).replicas).toBe(2);
    expect(pathsOf(out, 'kubectl')).toEqual(['.spec.replicas']);
    // the annotation now records the server-side applied configuration
    expect(JSON.parse((out.metadata as Obj).annotations['kubectl.kubernetes.io/last-applied-configuration'])).toEqual(
      deployment({ replicas: 2 }),
    );
  });

  it('entries are sorted Apply first, then by time and manager', () => {
    let obj = apply(undefined, deployment({ replicas: 1 }), 'zed', { now: T1 });
    obj = apply(obj, deployment({ paused: true }), 'amy', { now: T2 });
    const edited = { ...obj, spec: { ...(obj.spec as Obj), minReadySeconds: 5 } };
    const withUpdate = {
      ...edited,
      metadata: {
        ...(obj.metadata as Obj),
        managedFields: updateManagedFields({
          before: obj,
          after: edited,
          manager: 'editor',
          schema: deploymentSchema,
          now: T0,
        }),
      },
    };
    expect(entries(withUpdate).map((e) => `${e.operation}:${e.manager}`)).toEqual([
      'Apply:zed',
      'Apply:amy',
      'Update:editor',
    ]);
  });
});
