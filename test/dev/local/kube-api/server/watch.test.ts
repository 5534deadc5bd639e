import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../../support/wait.ts';
import { backends, readWatchLines, startTestCluster, type TestCluster } from './harness.ts';

interface WatchLine {
  type: string;
  object: any;
}

/** Opens a raw watch and collects its events; `until` resolves once a predicate over them holds. */
function openWatch(t: TestCluster, path: string) {
  const events: WatchLine[] = [];
  let ended = false;
  const waiters: (() => void)[] = [];
  const notify = () => {
    for (const w of waiters.splice(0)) w();
  };
  const stream = readWatchLines(t.cluster.url + path, (line) => {
    events.push(JSON.parse(line));
    notify();
  });
  const done = stream.done.then(() => {
    ended = true;
    notify();
  });
  return {
    events,
    ended: () => ended,
    async until(pred: (evs: WatchLine[]) => boolean, timeoutMs = 10_000): Promise<WatchLine[]> {
      const deadline = Date.now() + timeoutMs;
      while (!pred(events)) {
        if (ended)
          throw new Error(`watch ended before condition; events: ${JSON.stringify(events.map((e) => e.type))}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`watch condition not met; events: ${JSON.stringify(events.map((e) => e.type))}`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(timer);
            r();
          });
        });
      }
      return events;
    },
    async close() {
      stream.abort();
      await done;
    },
  };
}

describe.each(backends)('watch on $name storage', (backend) => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(backend, { bookmarkIntervalMs: 100 });
    ns = await t.namespace('watch');
  });
  afterAll(() => t?.stop());

  const cmPath = () => `/api/v1/namespaces/${ns}/configmaps`;

  it('streams ADDED, MODIFIED and DELETED after a resourceVersion', async () => {
    const start = await t.raw('GET', cmPath());
    const w = openWatch(t, `${cmPath()}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`);
    const created = await t.raw('POST', cmPath(), { metadata: { name: 'w1' }, data: { a: '1' } });
    await t.raw('PATCH', `${cmPath()}/w1`, { data: { a: '2' } }, { 'Content-Type': 'application/merge-patch+json' });
    await t.raw('DELETE', `${cmPath()}/w1`);
    const evs = await w.until((e) => e.length >= 3);
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(evs[0].object.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
    expect(evs[1].object.data.a).toBe('2');
    const rvs = evs.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
    expect(new Set(rvs).size).toBe(3);
    await w.close();
  });

  it('without a resourceVersion sends current objects as ADDED, then live changes', async () => {
    await t.raw('POST', cmPath(), { metadata: { name: 'pre' } });
    const w = openWatch(t, `${cmPath()}?watch=true&fieldSelector=metadata.name%3Dpre`);
    const initial = await w.until((e) => e.some((x) => x.type === 'ADDED' && x.object.metadata.name === 'pre'));
    expect(initial[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'pre' } } });
    await t.raw('PATCH', `${cmPath()}/pre`, { data: { b: '1' } }, { 'Content-Type': 'application/merge-patch+json' });
    const all = await w.until((e) => e.some((x) => x.type === 'MODIFIED'));
    expect(all.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    expect(all[1].object.data).toEqual({ b: '1' });
    await w.close();
  });

  it('turns label selector transitions into ADDED and DELETED', async () => {
    const start = await t.raw('GET', cmPath());
    const w = openWatch(
      t,
      `${cmPath()}?watch=1&labelSelector=tier%3Dfront&resourceVersion=${start.json.metadata.resourceVersion}`,
    );
    await t.raw('POST', cmPath(), { metadata: { name: 'sel', labels: { tier: 'back' } } });
    await t.raw(
      'PATCH',
      `${cmPath()}/sel`,
      { metadata: { labels: { tier: 'front' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await t.raw(
      'PATCH',
      `${cmPath()}/sel`,
      { metadata: { labels: { tier: 'back' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    const evs = await w.until((e) => e.length >= 2);
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    await w.close();
  });

  it('sends BOOKMARKs when allowed and ends at timeoutSeconds', async () => {
    const start = await t.raw('GET', cmPath());
    const w = openWatch(
      t,
      `${cmPath()}?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=${start.json.metadata.resourceVersion}`,
    );
    const evs = await w.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    const bm = evs.find((x) => x.type === 'BOOKMARK')!;
    expect(bm.object.kind).toBe('ConfigMap');
    expect(Number(bm.object.metadata.resourceVersion)).toBeGreaterThanOrEqual(
      Number(start.json.metadata.resourceVersion),
    );
    await waitFor(() => w.ended(), 5_000, 'the watch to end');
    await w.close();
  });

  it('answers a compacted resourceVersion with an ERROR event carrying 410 Expired', async () => {
    const first = await t.raw('POST', cmPath(), { metadata: { name: 'old' } });
    const oldRv = Number(first.json.metadata.resourceVersion);
    await t.raw('POST', cmPath(), { metadata: { name: 'newer' } });
    await t.raw('POST', cmPath(), { metadata: { name: 'newest' } });
    const rev = await t.cluster.storage.currentRevision();
    await t.cluster.storage.compact(rev);
    const w = openWatch(t, `${cmPath()}?watch=1&resourceVersion=${oldRv}`);
    const evs = await w.until((e) => e.length >= 1);
    expect(evs[0].type).toBe('ERROR');
    expect(evs[0].object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(evs[0].object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
    await waitFor(() => w.ended(), 5_000, 'the watch to end');
    await w.close();
  });

  it('drops watch connections when fault injection says so', async () => {
    t.cluster.setFaults({ rules: [{ verbs: ['watch'], resources: ['configmaps'], watchDropAfterMs: 100 }] });
    try {
      const start = await t.raw('GET', cmPath());
      const w = openWatch(t, `${cmPath()}?watch=1&resourceVersion=${start.json.metadata.resourceVersion}`);
      await waitFor(() => w.ended(), 5_000, 'the watch to end');
      await w.close();
    } finally {
      t.cluster.setFaults({ rules: [] });
    }
  });

  it('works with client-node Watch', async () => {
    const start = await t.raw('GET', cmPath());
    const seen: string[] = [];
    let resolveSeen!: () => void;
    const gotDelete = new Promise<void>((r) => (resolveSeen = r));
    const ctrl = await t.watch.watch(
      cmPath(),
      { resourceVersion: start.json.metadata.resourceVersion, allowWatchBookmarks: true },
      (phase, obj) => {
        if (phase === 'BOOKMARK') return;
        seen.push(`${phase}:${obj.metadata.name}`);
        if (phase === 'DELETED') resolveSeen();
      },
      () => undefined,
    );
    await t.raw('POST', cmPath(), { metadata: { name: 'cn' } });
    await t.raw('DELETE', `${cmPath()}/cn`);
    await gotDelete;
    ctrl.abort();
    expect(seen).toEqual(['ADDED:cn', 'DELETED:cn']);
  });
});
