import { describe, expect, it } from 'vitest';
import {
  applyStrategicMergePatch,
  PatchError,
  PatchInternalError,
} from '../../../../../dev/local/kube-api/patch/index.ts';
import { deploymentSchema } from './schemas.ts';

type Obj = Record<string, unknown>;
const pod = (spec: Obj): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { template: { spec } },
});
const podSpecOf = (o: Obj) => ((o.spec as Obj).template as Obj).spec as Obj;
const smp = (target: Obj, patch: unknown) => applyStrategicMergePatch(target, patch, deploymentSchema);

describe('strategic merge patch: lists merged by key', () => {
  const live = pod({
    containers: [
      {
        name: 'etcd',
        image: 'etcd:1',
        args: ['--a'],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
      { name: 'sidecar', image: 'busybox' },
    ],
  });

  it.each([
    {
      name: 'a container is merged by name, keeping its other fields and the other containers',
      patch: { containers: [{ name: 'etcd', image: 'etcd:2' }] },
      containers: [
        {
          name: 'etcd',
          image: 'etcd:2',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
    {
      name: 'env entries merge by name inside the merged container',
      patch: { containers: [{ name: 'etcd', env: [{ name: 'B', value: '3' }] }] },
      containers: [
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '3' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
    {
      name: 'a list without a merge strategy (args) is replaced',
      patch: { containers: [{ name: 'etcd', args: ['--b'] }] },
      containers: [
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--b'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
    {
      name: '$patch: delete removes the item with that merge key',
      patch: { containers: [{ name: 'sidecar', $patch: 'delete' }] },
      containers: [
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
      ],
    },
    {
      name: '$patch: replace makes the list exactly the patch items',
      patch: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] },
      containers: [{ name: 'only', image: 'x' }],
    },
    {
      name: 'without $setElementOrder a new item goes before the live-only items (apimachinery order)',
      patch: { containers: [{ name: 'new', image: 'n' }] },
      containers: [
        { name: 'new', image: 'n' },
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
    {
      name: '$setElementOrder fixes the order of patched and live items',
      patch: {
        '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'etcd' }, { name: 'new' }],
        containers: [{ name: 'new', image: 'n' }],
      },
      containers: [
        { name: 'sidecar', image: 'busybox' },
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'new', image: 'n' },
      ],
    },
    {
      name: 'null inside a merged item deletes that field',
      patch: { containers: [{ name: 'etcd', args: null, env: null }] },
      containers: [
        { name: 'etcd', image: 'etcd:1' },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
    {
      name: 'a new item loses its nulls and directives',
      patch: {
        containers: [
          {
            name: 'n',
            image: null,
            '$setElementOrder/env': [{ name: 'X' }],
            env: [
              { name: 'X', value: '1' },
              { name: 'Y', $patch: 'delete' },
            ],
          },
        ],
      },
      containers: [
        { name: 'n', env: [{ name: 'X', value: '1' }] },
        {
          name: 'etcd',
          image: 'etcd:1',
          args: ['--a'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
        },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
  ])('$name', ({ patch, containers }) => {
    const out = smp(live, { spec: { template: { spec: patch } } });
    expect(podSpecOf(out).containers).toEqual(containers);
    expect(podSpecOf(live).containers).toHaveLength(2); // the input is not mutated
  });

  it('ports merge by containerPort', () => {
    const out = smp(pod({ containers: [{ name: 'a', ports: [{ containerPort: 80, name: 'http' }] }] }), {
      spec: {
        template: {
          spec: {
            containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] }],
          },
        },
      },
    });
    expect(podSpecOf(out).containers).toEqual([
      { name: 'a', ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }] },
    ]);
  });
});

describe('strategic merge patch: maps, primitives and directives', () => {
  it('null deletes a map key and other keys merge', () => {
    const out = smp({ metadata: { labels: { a: '1', b: '2' } } }, { metadata: { labels: { a: null, c: '3' } } });
    expect(out).toEqual({ metadata: { labels: { b: '2', c: '3' } } });
  });

  it('finalizers (a primitive list with strategy merge) merge as a set; new values first, as apimachinery orders them', () => {
    const live = { metadata: { finalizers: ['a', 'b'] } };
    // 'c' follows 'b' (the live order ties patch items to live ones) ...
    expect(smp(live, { metadata: { finalizers: ['b', 'c'] } })).toEqual({ metadata: { finalizers: ['a', 'b', 'c'] } });
    // ... but a patch of only new values puts them before the live-only ones.
    expect(smp(live, { metadata: { finalizers: ['c'] } })).toEqual({ metadata: { finalizers: ['c', 'a', 'b'] } });
  });

  it('$setElementOrder and $deleteFromPrimitiveList, as kubectl apply sends them for a primitive set', () => {
    const out = smp(
      { metadata: { finalizers: ['a', 'b', 'c'] } },
      {
        metadata: {
          '$setElementOrder/finalizers': ['a', 'c', 'd'],
          '$deleteFromPrimitiveList/finalizers': ['b'],
          finalizers: ['d'],
        },
      },
    );
    expect(out).toEqual({ metadata: { finalizers: ['a', 'c', 'd'] } });
  });

  it('$patch: replace on a map replaces it; $patch: delete leaves it empty', () => {
    const live = { spec: { replicas: 3, paused: true, strategy: { type: 'Recreate' } } };
    expect(smp(live, { spec: { $patch: 'replace', replicas: 1 } })).toEqual({ spec: { replicas: 1 } });
    expect(smp(live, { spec: { strategy: { $patch: 'delete' } } })).toEqual({
      spec: { replicas: 3, paused: true, strategy: {} },
    });
  });

  it('$retainKeys clears the keys it does not list (deployment strategy)', () => {
    const live = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } };
    const out = smp(live, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
    expect(out).toEqual({ spec: { strategy: { type: 'Recreate' } } });
  });

  it('$retainKeys inside a merged list item (volumes are merge,retainKeys): switching the volume source', () => {
    const live = pod({
      containers: [{ name: 'a' }],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'other', emptyDir: {} },
      ],
    });
    const out = smp(live, {
      spec: {
        template: {
          spec: {
            '$setElementOrder/volumes': [{ name: 'data' }, { name: 'other' }],
            volumes: [{ $retainKeys: ['configMap', 'name'], configMap: { name: 'cm' }, name: 'data' }],
          },
        },
      },
    });
    expect(podSpecOf(out).volumes).toEqual([
      { name: 'data', configMap: { name: 'cm' } },
      { name: 'other', emptyDir: {} },
    ]);
  });

  it('a kubectl client-side apply patch updates the image and keeps server-set fields', () => {
    const live = pod({
      containers: [{ name: 'web', image: 'nginx:1', terminationMessagePath: '/dev/termination-log' }],
    });
    const out = smp(live, {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' } },
      spec: {
        template: {
          spec: { '$setElementOrder/containers': [{ name: 'web' }], containers: [{ image: 'nginx:2', name: 'web' }] },
        },
      },
    });
    expect(podSpecOf(out).containers).toEqual([
      { name: 'web', image: 'nginx:2', terminationMessagePath: '/dev/termination-log' },
    ]);
    expect((out.metadata as Obj).annotations).toEqual({ 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' });
  });

  it('without type info maps merge and lists are replaced', () => {
    const out = applyStrategicMergePatch(
      { spec: { list: [1, 2], m: { a: 1 } } },
      { spec: { list: [3], m: { b: 2 } } },
      undefined,
    );
    expect(out).toEqual({ spec: { list: [3], m: { a: 1, b: 2 } } });
  });
});

describe('strategic merge patch: errors kube-apiserver reports', () => {
  const live = pod({ containers: [{ name: 'a', image: 'x' }] });
  const patchContainers = (containers: unknown) => () => smp(live, { spec: { template: { spec: { containers } } } });

  it('an item without the merge key is a 500 with Go formatting', () => {
    expect(patchContainers([{ image: 'y' }])).toThrow(
      new PatchInternalError('map: map[image:y] does not contain declared merge key: name'),
    );
  });

  it('$patch: merge in a list is refused', () => {
    expect(patchContainers([{ $patch: 'merge' }])).toThrow('merging lists cannot yet be specified in the patch');
  });

  it('an unknown directive on a map is refused', () => {
    expect(() => smp(live, { spec: { $patch: 'merge' } })).toThrow(
      'unknown patch type: merge in map: map[$patch:merge]',
    );
  });

  it('a key missing from $retainKeys is a 400', () => {
    let err: unknown;
    try {
      smp({ spec: { strategy: {} } }, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatchError);
    expect(err).toMatchObject({ status: 400, message: 'invalid patch format of retainKeys' });
  });

  it('a malformed $deleteFromPrimitiveList key is a 400; lists of lists are a 422', () => {
    expect(() => smp({}, { $deleteFromPrimitiveListfinalizers: ['a'] })).toThrow(
      expect.objectContaining({ status: 400, message: 'invalid patch format of primitive list' }),
    );
    expect(() => smp({ metadata: { finalizers: [['a']] } }, { metadata: { finalizers: [['b']] } })).toThrow(
      expect.objectContaining({
        status: 422,
        message: 'the server rejected our request due to an error in our request',
      }),
    );
  });

  it('a body that is not an object does not decode (400); null is an empty patch', () => {
    expect(() => smp(live, [1])).toThrow(expect.objectContaining({ status: 400 }));
    expect(smp(live, null)).toEqual(live);
  });
});
