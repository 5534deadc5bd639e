import { describe, expect, it } from 'vitest';
import {
  fieldsV1Paths,
  type JsonObject,
  type ManagedFieldsEntry,
  serverSideApply,
  updateManagedFields,
} from '../../../../../dev/local/kube-api/patch/index.ts';
import { deploymentSchema } from './schemas.ts';

type Obj = Record<string, any>;
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';

const deployment = (spec: Obj, metadata: Obj = {}): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '5', ...metadata },
  spec,
});
const withEntries = (obj: JsonObject, managedFields: ManagedFieldsEntry[]): JsonObject => ({
  ...obj,
  metadata: { ...(obj.metadata as Obj), managedFields },
});
const update = (before: JsonObject | undefined, after: JsonObject, manager: string, extra: Obj = {}) =>
  updateManagedFields({ before, after, manager, schema: deploymentSchema, now: T1, ...extra });
const paths = (list: ManagedFieldsEntry[], manager: string) =>
  fieldsV1Paths(list.find((e) => e.manager === manager)?.fieldsV1 ?? {});

describe('managedFields for create/update/patch', () => {
  it('a create gives the writer every field, encoded as kube does for Go types (no "." on value structs)', () => {
    const obj = deployment(
      {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }] },
        },
      },
      { labels: { app: 'web' } },
    );
    expect(
      updateManagedFields({
        before: undefined,
        after: obj,
        manager: 'kubectl-create',
        schema: deploymentSchema,
        now: T0,
      }),
    ).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:resources': {} },
                },
              },
            },
          },
        },
      },
    ]);
  });

  it('a custom resource create marks every new map with "."', () => {
    const cr = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec: { size: 1 } };
    const [entry] = updateManagedFields({
      before: undefined,
      after: cr,
      manager: 'kubectl-create',
      schema: undefined,
      now: T0,
    });
    expect(entry.fieldsV1).toEqual({ 'f:spec': { '.': {}, 'f:size': {} } });
  });

  it('the writer takes changed fields from their owner and removed fields leave everyone', () => {
    const applied = serverSideApply({
      live: undefined,
      applied: deployment({ replicas: 2, paused: false }, { labels: { a: '1', b: '2' } }),
      manager: 'alice',
      force: false,
      schema: deploymentSchema,
      now: T0,
    });
    const scaled = {
      ...applied,
      spec: { replicas: 3, paused: false },
      metadata: { ...(applied.metadata as Obj), labels: { a: '1' } },
    };
    const list = update(applied, scaled, 'kubectl-scale');
    expect(paths(list, 'alice')).toEqual(['.metadata.labels.a', '.spec.paused']);
    expect(paths(list, 'kubectl-scale')).toEqual(['.spec.replicas']);
    expect(list.map((e) => [e.manager, e.operation, e.time])).toEqual([
      ['alice', 'Apply', T0],
      ['kubectl-scale', 'Update', T1],
    ]);
  });

  it('repeated writes by one manager accumulate in one entry', () => {
    const v1 = deployment({ replicas: 1 });
    const first = update(undefined, v1, 'editor');
    const v2 = withEntries(deployment({ replicas: 1, paused: true }), first);
    const second = update(withEntries(v1, first), v2, 'editor');
    expect(second).toHaveLength(1);
    expect(paths(second, 'editor')).toEqual(['.spec.paused', '.spec.replicas']);
  });

  it('a write that changes nothing keeps the entries (and their timestamps) as they were', () => {
    const live = withEntries(
      deployment({ replicas: 1 }),
      update(undefined, deployment({ replicas: 1 }), 'a', { now: T0 }),
    );
    expect(update(live, live, 'b')).toEqual((live.metadata as Obj).managedFields);
  });

  it('an existing object without managedFields stays untracked', () => {
    expect(update(deployment({ replicas: 1 }), deployment({ replicas: 2 }), 'editor')).toEqual([]);
  });

  it('a client may rewrite the list; [{}] resets it', () => {
    const live = withEntries(
      deployment({ replicas: 1 }),
      update(undefined, deployment({ replicas: 1 }), 'a', { now: T0 }),
    );
    expect(update(live, withEntries(deployment({ replicas: 1 }), [{}] as never), 'b')).toEqual([]);
    expect(update(live, withEntries(deployment({ replicas: 1 }), []), 'b')).toEqual(
      (live.metadata as Obj).managedFields,
    );
  });

  it('status writes get a status subresource entry and ignore a client-sent list', () => {
    const live = withEntries(
      deployment({ replicas: 1 }),
      update(undefined, deployment({ replicas: 1 }), 'a', { now: T0 }),
    );
    const after = withEntries({ ...deployment({ replicas: 1 }), status: { replicas: 1 } }, []);
    const list = update(live, after, 'controller', { subresource: 'status' });
    expect(list.find((e) => e.manager === 'controller')).toMatchObject({ operation: 'Update', subresource: 'status' });
    expect(paths(list, 'controller')).toEqual(['.status.replicas']);
    expect(paths(list, 'a')).toEqual(['.spec.replicas']);
  });

  it('a status write sharing the spec with the stored object takes what a copied spec would, and keeps the other entries', () => {
    const template = { spec: { containers: [{ name: 'etcd', image: 'etcd:3.6', args: ['--a'] }] } };
    let templateReads = 0;
    const spec = {
      replicas: 1,
      // Counts every look at the template, so the test sees whether the shared spec is walked at all.
      get template() {
        templateReads += 1;
        return template;
      },
    };
    const stored = withEntries(deployment(spec), update(undefined, deployment(spec), 'a', { now: T0 }));
    templateReads = 0;
    const statusWrite = (rest: Obj) => ({ ...rest, status: { replicas: 1, readyReplicas: 1 } });
    // As the store builds a status write: the stored top level and spec, a new status.
    const shared = update(stored, statusWrite({ ...stored }), 'kubelet', { subresource: 'status' });
    // The shared spec is never walked: one value on both sides has nothing added, changed or removed below it.
    expect(templateReads).toBe(0);
    const copied = update(stored, statusWrite(structuredClone(stored)), 'kubelet', { subresource: 'status' });
    expect(shared).toEqual(copied);
    expect(paths(shared, 'kubelet')).toEqual(['.status.readyReplicas', '.status.replicas']);
    // The untouched manager's entry is the stored one itself: decoded and encoded by lookups, not again.
    expect(shared.find((e) => e.manager === 'a')?.fieldsV1).toBe((stored.metadata as Obj).managedFields[0].fieldsV1);
    // A main-resource write that changes one field inside a shared-looking value still sees that change.
    const edited = {
      ...stored,
      spec: {
        ...spec,
        template: { spec: { containers: [{ ...template.spec.containers[0], image: 'etcd:3.7' }] } },
      },
    };
    expect(paths(update(stored, edited, 'editor'), 'editor')).toEqual([
      '.spec.template.spec.containers[name="etcd"].image',
    ]);
  });

  it('reset fields give no ownership through the main resource', () => {
    const list = update(undefined, { ...deployment({ replicas: 1 }), status: { replicas: 1 } }, 'creator', {
      resetFields: [['status']],
    });
    expect(paths(list, 'creator')).toEqual(['.spec.replicas']);
  });
});

describe('managedFields growth', () => {
  it('folds the oldest Update entries into "ancient-changes" beyond 10 updaters', () => {
    let obj = deployment({});
    let list: ManagedFieldsEntry[] = [];
    for (let i = 0; i < 12; i++) {
      const after = withEntries(deployment({ ...(obj.spec as Obj), [`f${i}`]: i }), list);
      list = updateManagedFields({
        before: i === 0 ? undefined : withEntries(obj, list),
        after,
        manager: `m${String(i).padStart(2, '0')}`,
        schema: undefined,
        now: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
      });
      obj = after;
    }
    expect(list).toHaveLength(10);
    expect(list[0]).toMatchObject({ manager: 'ancient-changes', operation: 'Update', time: '2026-01-01T00:00:02Z' });
    expect(fieldsV1Paths(list[0].fieldsV1)).toEqual(['.spec', '.spec.f0', '.spec.f1', '.spec.f2']);
    expect(list.slice(1).map((e) => e.manager)).toEqual([
      'm03',
      'm04',
      'm05',
      'm06',
      'm07',
      'm08',
      'm09',
      'm10',
      'm11',
    ]);
  });
});
