/**
 * Memory storage hands every watcher of one event the same memo, and HTTP watches that would send the same
 * line serialize it once (handlers/watch.ts). These tests hold the shared lines to the unshared ones, byte
 * for byte: a watch that starts from an old resourceVersion replays history one watcher at a time, with no
 * memo, so its lines are what each watch would have sent on its own.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type StorageWatchEvent, WatchEventMemo } from '../../../../../dev/local/kube-api/storage/types.ts';
import { waitFor } from '../../../../support/wait.ts';
import { memoryBackend, readWatchLines, startTestCluster, type TestCluster, WIDGET_CRD } from './harness.ts';

const PARTIAL = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

/** A raw watch: every line exactly as received (with its newline). */
function rawWatch(t: TestCluster, path: string, accept?: string) {
  const lines: string[] = [];
  const stream = readWatchLines(t.cluster.url + path, (line) => lines.push(line), accept ? { accept } : {});
  return {
    lines,
    /** Waits until a line mentions `marker`. */
    seen: (marker: string) =>
      waitFor(() => lines.some((l) => l.includes(marker)), 10_000, `${path} (${accept ?? 'json'}) to see ${marker}`),
    async close() {
      stream.abort();
      await stream.done;
    },
  };
}

/**
 * A line as it is, but for a Table row's Age cell (its last): that is the server's clock when the line is
 * written, as kube's printer has it, so a replay a second later says 1s where the live line said 0s. Table
 * lines are never shared; every other line is compared byte for byte.
 */
function withoutTableAge(line: string): string {
  const event = JSON.parse(line);
  if (event.object?.kind !== 'Table') return line;
  for (const row of event.object.rows) row.cells[row.cells.length - 1] = '<age>';
  return JSON.stringify(event);
}

/** Counts how often WatchEventMemo.text is asked and how often it had to compute. */
function countMemo() {
  const counts = { asked: 0, computed: 0 };
  const original = WatchEventMemo.prototype.text;
  vi.spyOn(WatchEventMemo.prototype, 'text').mockImplementation(function (
    this: WatchEventMemo,
    owner: object,
    key: string,
    compute: () => string,
  ) {
    counts.asked++;
    return original.call(this, owner, key, () => {
      counts.computed++;
      return compute();
    });
  });
  return counts;
}

/** An in-process consumer that scribbles over every object it is handed (top level and metadata). */
function scribbler(t: TestCluster, prefix: string, after: number) {
  const scribble = (v: any) => {
    v.apiVersion = 'scribbled/v0';
    v.kind = 'Scribbled';
    v.extra = 'scribbled';
    delete v.data;
    delete v.spec;
    v.metadata.name = 'scribbled';
    v.metadata.resourceVersion = '1';
    v.metadata.labels = { scribbled: 'true' };
  };
  let seen = 0;
  const handle = t.cluster.storage.watch(
    prefix,
    after,
    (e: StorageWatchEvent) => {
      seen++;
      if (e.type === 'put') scribble(e.value);
      if (e.prevValue) scribble(e.prevValue);
    },
    () => undefined,
  );
  return { seen: () => seen, stop: () => handle.stop() };
}

describe('watch lines shared between the watchers of one event (memory storage)', () => {
  let t: TestCluster;
  let ns: string;
  beforeAll(async () => {
    t = await startTestCluster(memoryBackend);
    ns = await t.namespace('share');
  });
  afterAll(() => t?.stop());
  afterEach(() => vi.restoreAllMocks());

  it('sends every watch the bytes it would send unshared, whatever other consumers do to their objects', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const rv0 = (await t.raw('GET', path)).json.metadata.resourceVersion as string;
    const prefix = `/registry/configmaps/${ns}/`;
    // Registered before the HTTP watches, so it gets each event first and changes its copy before they serialize.
    const before = scribbler(t, prefix, Number(rv0));
    const variants: { query: string; accept?: string }[] = [
      { query: '' },
      { query: '&labelSelector=tier%3Dfront' },
      { query: '', accept: PARTIAL },
      { query: '&labelSelector=tier%3Dfront', accept: PARTIAL },
      { query: '', accept: TABLE },
      { query: '&fieldSelector=metadata.name%3Dx' },
      { query: '' },
      // Its first event comes when watch 4 has long sent its columns: Table lines differ by watch.
      { query: '&fieldSelector=metadata.name%3Dx', accept: TABLE },
    ];
    const nameSelected = new Set([5, 7]);
    const open = () => variants.map((v) => rawWatch(t, `${path}?watch=1&resourceVersion=${rv0}${v.query}`, v.accept));
    const live = open();
    // Once every watch has seen this, every watch is live: the writes below are dispatched to all at once.
    await t.raw('POST', path, { metadata: { name: 'start-marker', labels: { tier: 'front' } } });
    await Promise.all(live.filter((_, i) => !nameSelected.has(i)).map((w) => w.seen('start-marker')));
    await waitFor(() => before.seen() > 0, 10_000, 'the in-process consumer to be live');
    const after = scribbler(t, prefix, Number((await t.raw('GET', path)).json.metadata.resourceVersion));
    await waitFor(
      async () => {
        await t.raw('PATCH', `${path}/start-marker`, { data: { poke: String(Date.now()) } }, MERGE);
        return after.seen() > 0;
      },
      10_000,
      'the second in-process consumer to be live',
    );

    const counts = countMemo();
    const writes = [
      () => t.raw('POST', path, { metadata: { name: 'x', labels: { tier: 'back' } }, data: { a: 'ü ✓ "quoted"' } }),
      () => t.raw('PATCH', `${path}/x`, { metadata: { labels: { tier: 'front' } } }, MERGE),
      () => t.raw('PATCH', `${path}/x`, { data: { b: '2' } }, MERGE),
      () => t.raw('PATCH', `${path}/x`, { metadata: { labels: { tier: 'back' } } }, MERGE),
      () => t.raw('PATCH', `${path}/x`, { metadata: { labels: { tier: 'front' } } }, MERGE),
      () => t.raw('DELETE', `${path}/x`),
      () => t.raw('POST', path, { metadata: { name: 'y' }, data: { c: '3' } }),
      () => t.raw('DELETE', `${path}/y`),
      () => t.raw('POST', path, { metadata: { name: 'end-marker', labels: { tier: 'front' } } }),
    ];
    for (const write of writes) expect((await write()).status).toBeLessThan(300);
    await Promise.all(live.filter((_, i) => !nameSelected.has(i)).map((w) => w.seen('end-marker')));
    for (const i of nameSelected)
      await waitFor(() => live[i].lines.length >= 6, 10_000, `the name-selected watch ${i} to see x go`);
    // The two unselected JSON watches send the same line for every event: shared, not serialized twice.
    expect(counts.asked - counts.computed).toBeGreaterThanOrEqual(writes.length);
    before.stop();
    after.stop();

    // The same watches started at rv0 again now replay history, one watcher per event and no memo.
    const replayed = open();
    await Promise.all(
      replayed.map((w, i) =>
        waitFor(() => w.lines.length >= live[i].lines.length, 10_000, `replay of watch ${i} to catch up`),
      ),
    );
    for (const [i, w] of live.entries())
      expect(w.lines.map(withoutTableAge), `watch ${i}`).toEqual(replayed[i].lines.map(withoutTableAge));

    // Spot checks of what was sent, so that equal is also right.
    const types = (i: number) =>
      live[i].lines.map((l) => `${JSON.parse(l).type}:${JSON.parse(l).object.metadata?.name ?? ''}`);
    const xEvents = (i: number) => types(i).filter((s) => s.endsWith(':x'));
    expect(xEvents(0)).toEqual(['ADDED:x', 'MODIFIED:x', 'MODIFIED:x', 'MODIFIED:x', 'MODIFIED:x', 'DELETED:x']);
    expect(xEvents(1)).toEqual(['ADDED:x', 'MODIFIED:x', 'DELETED:x', 'ADDED:x', 'DELETED:x']);
    expect(xEvents(3)).toEqual(xEvents(1));
    expect(xEvents(5)).toEqual(xEvents(0));
    const first = JSON.parse(live[0].lines.find((l) => l.includes('"name":"x"'))!);
    expect(first.object).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x', labels: { tier: 'back' } },
      data: { a: 'ü ✓ "quoted"' },
    });
    expect(first.object.extra).toBeUndefined();
    const partial = JSON.parse(live[2].lines.find((l) => l.includes('"name":"x"'))!);
    expect(partial.object.kind).toBe('PartialObjectMetadata');
    expect(partial.object.data).toBeUndefined();
    // A Table watch keeps its own state: columns once, on its first event only.
    const table = live[4].lines.map((l) => JSON.parse(l).object);
    expect(table[0].columnDefinitions).not.toBeNull();
    expect(table.slice(1).every((o) => o.columnDefinitions === null)).toBe(true);
    const tableOfX = live[7].lines.map((l) => JSON.parse(l).object);
    expect(tableOfX[0].columnDefinitions).not.toBeNull();
    expect(tableOfX.slice(1).every((o) => o.columnDefinitions === null)).toBe(true);
    await Promise.all([...live, ...replayed].map((w) => w.close()));
  });

  it('keeps the lines of different served versions apart', async () => {
    const crd = structuredClone(WIDGET_CRD) as any;
    crd.spec.versions = [
      crd.spec.versions[0],
      { ...structuredClone(crd.spec.versions[0]), name: 'v1beta1', storage: false },
    ];
    expect((await t.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    const v1 = `/apis/example.com/v1/namespaces/${ns}/widgets`;
    const beta = `/apis/example.com/v1beta1/namespaces/${ns}/widgets`;
    await waitFor(async () => (await t.raw('GET', beta)).status === 200, 10_000, 'v1beta1 widgets to be served');
    const rv0 = (await t.raw('GET', v1)).json.metadata.resourceVersion as string;
    const open = () => [v1, beta, v1, beta].map((p) => rawWatch(t, `${p}?watch=1&resourceVersion=${rv0}`));
    const live = open();
    const marker = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'start-marker' }, spec: {} };
    expect((await t.raw('POST', v1, marker)).status).toBe(201);
    await Promise.all(live.map((w) => w.seen('start-marker')));

    const counts = countMemo();
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { color: 'red' } };
    expect((await t.raw('POST', v1, widget)).status).toBe(201);
    expect((await t.raw('PATCH', `${beta}/w`, { spec: { color: 'blue' } }, MERGE)).status).toBe(200);
    expect((await t.raw('DELETE', `${v1}/w`)).status).toBe(200);
    await Promise.all(live.map((w) => waitFor(() => w.lines.length >= 4, 10_000, 'the widget events')));
    // Per event: one line per version, each reused by the second watch of that version.
    expect(counts).toEqual({ asked: 12, computed: 6 });

    const apiVersions = (i: number) => live[i].lines.map((l) => JSON.parse(l).object.apiVersion);
    expect(apiVersions(0)).toEqual(Array(4).fill('example.com/v1'));
    expect(apiVersions(1)).toEqual(Array(4).fill('example.com/v1beta1'));
    expect(live[2].lines).toEqual(live[0].lines);
    expect(live[3].lines).toEqual(live[1].lines);
    const replayed = open();
    await Promise.all(replayed.map((w) => waitFor(() => w.lines.length >= 4, 10_000, 'the replayed widget events')));
    for (const [i, w] of live.entries()) expect(w.lines, `watch ${i}`).toEqual(replayed[i].lines);
    await Promise.all([...live, ...replayed].map((w) => w.close()));
  });
});
