/**
 * WATCH: a chunked stream of {type, object} lines. Starts from the given resourceVersion, or — with none
 * or "0" — sends the current state as ADDED first. Selector changes turn into ADDED/DELETED like kube's
 * watch filter. BOOKMARKs when allowed; a compacted start revision ends with an ERROR event carrying a
 * 410 Expired Status, as client-go's reflector expects.
 */

import { groupVersion } from '../../registry.ts';
import { CompactedError, type StorageWatchEvent, type WatchEventMemo } from '../../storage/types.ts';
import { badRequest } from '../errors.ts';
import { type ApiObject, type JsonObject, present } from '../objects.ts';
import { tableModule } from '../peers.ts';
import { negotiate, type OutputForm } from '../respond.ts';
import { listPrefixFor } from './list.ts';
import { partial, tableResource } from './render.ts';
import type { Scope } from './scope.ts';
import { selectionFilter } from './selection.ts';

const DEFAULT_TIMEOUT_S = 1800;

function parseTimeout(query: URLSearchParams): number {
  const raw = query.get('timeoutSeconds');
  if (raw === null || raw === '') return DEFAULT_TIMEOUT_S;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw badRequest(`timeoutSeconds: Invalid value: ${JSON.stringify(raw)}: must be a non-negative integer`);
  return n === 0 ? DEFAULT_TIMEOUT_S : n;
}

export async function handleWatch(s: Scope): Promise<void> {
  const { ctx, info, route, query, res, req } = s;
  const form: OutputForm = negotiate(req, query, true);
  const selection = selectionFilter(info, query);
  const name = route.name;
  const unfiltered = name === undefined && !selection;
  /** The selector's label part, when that is all there is to it and no name is asked for. */
  const labelsAlone = name === undefined && selection?.labelsOnly ? selection.labels : undefined;
  const filter = (obj: ApiObject) =>
    (name === undefined || obj.metadata?.name === name) && (!selection || selection(obj));
  const rvParam = query.get('resourceVersion') ?? '';
  if (rvParam !== '' && !/^\d+$/.test(rvParam))
    throw badRequest(`resourceVersion: Invalid value: ${JSON.stringify(rvParam)}: must be an integer`);
  const timeoutMs = parseTimeout(query) * 1000;
  const bookmarks = query.get('allowWatchBookmarks') === 'true';
  const sendInitialEvents = query.get('sendInitialEvents') === 'true';
  const prefix = listPrefixFor(info, route.namespace);
  const gv = groupVersion(info.group, info.version);

  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();

  let closed = false;
  let lastRev = 0;
  let handle: { stop(): void } | undefined;
  const timers: ReturnType<typeof setTimeout>[] = [];

  let columnsSent = false;
  const shape = (obj: ApiObject): unknown => {
    if (form.form === 'table') {
      const table = tableModule.toTable(tableResource(info), [obj], {
        includeObject: form.includeObject,
        resourceVersion: String(obj.metadata.resourceVersion),
      });
      // As kube: a watch's first Table event defines the columns, later ones carry null.
      if (columnsSent) return { ...table, columnDefinitions: null };
      columnsSent = true;
      return table;
    }
    return form.form === 'partial' ? partial(obj) : obj;
  };
  const line = (type: string, object: unknown) => `${JSON.stringify({ type, object })}\n`;
  const write = (type: string, object: unknown) => {
    if (!closed) res.write(line(type, object));
  };
  /**
   * Writes a storage event's line, serialized once for all the watches of that event that send the same
   * bytes (the memory backend dispatches an event to all its watchers at once and hands them one memo; a Pod
   * event goes to the forwarder's watch and the kubelet's). The bytes depend on: the event (same value,
   * same revision for every watcher), which of its values is sent (`source`), the type, the output form, and
   * what present() stamps from `info` (apiVersion, kind) — one ResourceInfo per served group/version/
   * resource, so `info` as the memo's owner keeps other versions and resources apart. A name or selector
   * only decides whether a line is sent, never what it says. Table lines are never shared: whether they
   * carry columnDefinitions depends on this watch's columnsSent.
   */
  const send = (memo: WatchEventMemo | undefined, source: 'value' | 'prevValue', type: string, obj: ApiObject) => {
    if (closed) return;
    if (!memo || form.form === 'table') return write(type, shape(obj));
    res.write(memo.text(info, `${form.form} ${source} ${type}`, () => line(type, shape(obj))));
  };
  const bookmark = (rev: number, initialEventsEnd = false) => {
    const metadata: JsonObject = { resourceVersion: String(rev) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    write('BOOKMARK', { kind: info.kind, apiVersion: gv, metadata });
  };
  const finish = () => {
    if (closed) return;
    closed = true;
    handle?.stop();
    for (const t of timers) clearTimeout(t);
    ctx.openWatches.delete(finish);
    res.end();
  };
  ctx.openWatches.add(finish);
  req.on('close', finish);
  res.on('close', finish);

  /** Revision safe to announce in a BOOKMARK: no later event can carry a smaller one. */
  const progressRevision = async () => {
    // Memory storage delivers events synchronously with the write, so its current revision is safe.
    if (ctx.storage.backend !== 'memory') return lastRev;
    try {
      return Math.max(lastRev, await ctx.storage.currentRevision());
    } catch {
      return lastRev; // storage closing under us: the watch is about to end anyway
    }
  };

  const onEvent = (e: StorageWatchEvent, memo?: WatchEventMemo) => {
    if (closed) return;
    lastRev = e.modRevision;
    if (e.type === 'delete') {
      const prev = present(info, e.prevValue as ApiObject, e.modRevision);
      if (filter(prev)) send(memo, 'prevValue', 'DELETED', prev);
      return;
    }
    const obj = present(info, e.value as ApiObject, e.modRevision);
    const now = filter(obj);
    // Without a name or selector every object matches: an object that existed before was seen before, and
    // its previous value need not be read (or parsed). With a label selector alone, its previous labels
    // decide, when storage has them (the forwarder's watches of the reconciler's objects select so).
    const before = e.created
      ? false
      : unfiltered ||
        (labelsAlone && e.prevLabels
          ? labelsAlone(e.prevLabels.labels)
          : e.prevValue !== undefined && filter(present(info, e.prevValue as ApiObject, e.modRevision)));
    if (now && before) send(memo, 'value', 'MODIFIED', obj);
    else if (now) send(memo, 'value', 'ADDED', obj);
    else if (before) send(memo, 'value', 'DELETED', obj);
  };
  const onError = (err: Error) => {
    if (closed) return;
    if (err instanceof CompactedError) {
      write('ERROR', {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${err.requested} (${err.compactRevision})`,
        reason: 'Expired',
        code: 410,
      });
    } else {
      write('ERROR', {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: err.message,
        reason: 'InternalError',
        code: 500,
      });
    }
    finish();
  };

  let startRev: number;
  if (rvParam === '' || rvParam === '0' || sendInitialEvents) {
    const listed = await ctx.storage.list(prefix);
    startRev = listed.revision;
    for (const item of listed.items) {
      const obj = present(info, item.value as ApiObject, item.modRevision);
      if (filter(obj)) write('ADDED', shape(obj));
    }
    if (sendInitialEvents && bookmarks) bookmark(startRev, true);
  } else {
    startRev = Number(rvParam);
  }
  lastRev = startRev;
  if (closed) return;
  handle = ctx.storage.watch(prefix, startRev, onEvent, onError);

  // A timer's async work ends the watch with an ERROR event if it fails, instead of an unhandled rejection.
  const later = (work: () => Promise<void>) => () =>
    void work().catch((err: unknown) => onError(err instanceof Error ? err : new Error(String(err))));
  timers.push(
    setTimeout(
      later(async () => {
        if (bookmarks) bookmark(await progressRevision());
        finish();
      }),
      timeoutMs,
    ),
  );
  if (bookmarks) {
    const interval = setInterval(
      later(async () => {
        if (!closed) bookmark(await progressRevision());
      }),
      ctx.bookmarkIntervalMs,
    );
    res.on('close', () => clearInterval(interval));
  }
  if (s.dropWatchAfterMs !== undefined) timers.push(setTimeout(() => res.destroy(), s.dropWatchAfterMs));
}
