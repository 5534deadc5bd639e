/**
 * The local API's in-process caches (dev/local/kube-api/server/object-cache.ts), held against what an HTTP
 * informer on the same collection sees: the same objects at the same resourceVersions, the same changes in
 * the same order, and a relist after its history was compacted away that misses no deletion.
 */

import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer } from '../../../../../adapters/kubernetes/informer.ts';
import type { CacheChange } from '../../../../../dev/local/kube-api/index.ts';
import { CompactedError } from '../../../../../dev/local/kube-api/storage/types.ts';
import { startTestCluster, type TestCluster, waitFor } from '../../../../support/local-cluster.ts';

type Obj = Record<string, any>;

const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', labels: { cache: 'test' } },
  data,
});

describe('LocalCluster.objectCaches', () => {
  let t: TestCluster;
  beforeAll(async () => {
    t = await startTestCluster({ crds: false });
  });
  afterAll(() => t?.stop());

  const path = '/api/v1/namespaces/default/configmaps';
  const mine = (o: Obj) => o.metadata?.labels?.cache === 'test';

  it('lists, then hands on every change as an HTTP informer of the same collection sees it', async () => {
    await t.api.requestJson(HttpMethod.POST, path, { body: configMap('before', { a: '1' }) });
    const seen: string[] = [];
    const cache = t.cluster.objectCaches('/api/v1/configmaps', (type: CacheChange, o) => {
      if (mine(o)) seen.push(`${type} ${o.metadata.name} ${o.metadata.resourceVersion}`);
    });
    const heard: string[] = [];
    const informer = new Informer<Obj>(
      t.kc,
      { apiVersion: 'v1', kind: 'ConfigMap', path: '/api/v1/configmaps', summarize: (o) => o, isRelevant: () => true },
      {
        onChange: async (type, _key, o) => {
          if (mine(o)) heard.push(`${type} ${o.metadata.name} ${o.metadata.resourceVersion}`);
        },
      },
    );
    void cache.run();
    void informer.run();
    try {
      await Promise.all([cache.hasSynced, informer.hasSynced]);
      const created: Obj = await t.api.requestJson(HttpMethod.POST, path, { body: configMap('during', { b: '1' }) });
      await t.api.requestJson(HttpMethod.PUT, `${path}/during`, {
        body: { ...created, data: { b: '2' } },
      });
      await t.api.requestJson(HttpMethod.DELETE, `${path}/before`);
      await waitFor(() => heard.length >= 4 && seen.length >= 4, 5_000, 'both to see the four changes');

      expect(seen).toEqual(heard);
      expect(seen.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual([
        'ADDED before',
        'ADDED during',
        'MODIFIED during',
        'DELETED before',
      ]);
      const stored: Obj = await t.api.requestJson(HttpMethod.GET, `${path}/during`);
      const cached = cache.get('default/during')!;
      expect(cached).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { b: '2' } });
      expect(cached.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
      expect(cache.get('default/before')).toBeUndefined();
      expect([...cache.values()].filter(mine).map((o) => o.metadata.name)).toEqual(['during']);
      const rvs = (m: Map<string, Obj>) => [...m].map(([k, o]) => `${k}@${o.metadata.resourceVersion}`).sort();
      expect(rvs(cache.snapshot())).toEqual(rvs(informer.snapshot()));
    } finally {
      cache.stop();
      informer.stop();
      await t.api.requestJson(HttpMethod.DELETE, `${path}/during`).catch(() => undefined);
    }
  });

  it('relists when its history was compacted under it, and a deletion it missed still comes as DELETED', async () => {
    await t.api.requestJson(HttpMethod.POST, path, { body: configMap('gone-later', { a: '1' }) });
    const seen: string[] = [];
    const cache = t.cluster.objectCaches('/api/v1/configmaps', (type, o) => {
      if (mine(o)) seen.push(`${type} ${o.metadata.name}`);
    });
    // The cache's first watch goes deaf on cue, then dies as a compaction ends a watch that fell behind.
    const storage = t.cluster.storage;
    const realWatch = storage.watch.bind(storage);
    let deaf = false;
    let die: ((err: Error) => void) | undefined;
    storage.watch = (prefix, after, onEvent, onError) => {
      storage.watch = realWatch;
      const handle = realWatch(prefix, after, (e, memo) => deaf || onEvent(e, memo), onError);
      die = (err) => {
        handle.stop();
        onError(err);
      };
      return handle;
    };
    try {
      void cache.run();
      await cache.hasSynced;
      expect(seen).toEqual(['ADDED gone-later']);
      deaf = true;
      await t.api.requestJson(HttpMethod.DELETE, `${path}/gone-later`);
      expect(seen).toEqual(['ADDED gone-later']);
      die!(new CompactedError(1, 2));
      await waitFor(() => seen.includes('DELETED gone-later'), 5_000, 'the relist to report the deletion');
      expect(cache.get('default/gone-later')).toBeUndefined();
      expect(seen).toEqual(['ADDED gone-later', 'DELETED gone-later']);
    } finally {
      storage.watch = realWatch;
      cache.stop();
    }
  });

  it('refuses a path that is no collection this API serves, naming it', () => {
    expect(() => t.cluster.objectCaches('/apis/nothing.example/v1/widgets', () => undefined)).toThrow(
      /"\/apis\/nothing.example\/v1\/widgets" is not a collection this API serves/,
    );
    expect(() => t.cluster.objectCaches('/api/v1/namespaces/default/pods', () => undefined)).toThrow(
      /is not a collection/,
    );
  });
});
