/**
 * The etcd launcher and the maintenance/metrics helpers, against real etcd processes (the pinned 3.6 build).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EtcdStartError, etcdFlags, flagArgs, type RunningEtcd, startEtcd } from '../../../../dev/local/etcd/launch.ts';
import {
  compactTo,
  defragment,
  dirBytes,
  disarmAlarms,
  etcdStatus,
  processRssBytes,
} from '../../../../dev/local/etcd/metrics.ts';
import { createEtcdStorage } from '../../../../dev/local/kube-api/storage/etcd.ts';
import { CompactedError, type Storage } from '../../../../dev/local/kube-api/storage/types.ts';

const WAIT = { timeout: 10_000, interval: 10 };
const isRunning = (pid: number) => {
  try {
    // A zombie still answers kill(0); only a live process has a non-zombie state in /proc.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

describe('startEtcd', () => {
  const started: RunningEtcd[] = [];
  afterAll(async () => {
    await Promise.all(started.map((e) => e.stop()));
  });

  it('runs etcd on loopback with a fresh /dev/shm data dir, logs to a file, and cleans up on stop', async () => {
    const [a, b] = await Promise.all([startEtcd(), startEtcd({ name: 'second' })]);
    started.push(a, b);
    expect(a.endpoint).toBe(`http://127.0.0.1:${a.clientPort}`);
    expect(a.clientPort).not.toBe(b.clientPort);
    expect(a.dataDir).toMatch(/^\/dev\/shm\//);
    expect(a.dataDir).not.toBe(b.dataDir);
    expect(await (await fetch(`${a.endpoint}/health`)).json()).toMatchObject({ health: 'true' });
    expect(existsSync(join(a.dataDir, 'data', 'member'))).toBe(true);
    expect(readFileSync(a.logFile, 'utf8')).toMatch(/serving client traffic/);
    expect(a.logFile.startsWith(a.dataDir)).toBe(true);
    expect(isRunning(a.pid)).toBe(true);

    await a.stop();
    await a.stop(); // a second stop is harmless
    expect(isRunning(a.pid)).toBe(false);
    expect(existsSync(a.dataDir)).toBe(false);
    expect(isRunning(b.pid)).toBe(true);
  });

  it('keeps a caller-provided data dir on stop', async () => {
    const dir = await mkdtemp('/dev/shm/etcd-launch-test-');
    try {
      const e = await startEtcd({ dataDir: dir });
      started.push(e);
      expect(e.dataDir).toBe(dir);
      await e.stop();
      expect(existsSync(join(dir, 'data', 'member'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails with etcd own words when it refuses to start, and leaves nothing behind', async () => {
    const err = await startEtcd({ extraArgs: ['--snapshot-count=lots'] }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(EtcdStartError);
    expect(err!.message).toMatch(/exited during startup[\s\S]*snapshot-count/);
  });

  it('rejects a member name etcd would choke on', async () => {
    await expect(startEtcd({ name: 'a b' })).rejects.toThrow(/name must be/);
  });

  it('exposes the product flag preset as command-line flags', () => {
    expect(flagArgs(etcdFlags.product)).toEqual(expect.arrayContaining(['--snapshot-count=5000', '--max-wals=1']));
  });
});

describe('etcd storage when etcd goes away', () => {
  it('ends open watches with onError so the API layer can end the HTTP watch', async () => {
    const e = await startEtcd();
    const storage = await createEtcdStorage({ endpoints: [e.endpoint] });
    try {
      const errors: Error[] = [];
      const events: unknown[] = [];
      storage.watch(
        '/registry/',
        0,
        (ev) => events.push(ev),
        (err) => errors.push(err),
      );
      await storage.create('/registry/pods/default/p', {});
      await vi.waitFor(() => expect(events).toHaveLength(1), WAIT);
      await e.stop();
      await vi.waitFor(() => expect(errors).toHaveLength(1), WAIT);
      expect(errors[0]).not.toBeInstanceOf(CompactedError);
      expect(errors[0].message).toMatch(/watch stream/);
    } finally {
      await storage.close();
      await e.stop();
    }
  });

  it('refuses bad endpoints with a clear error', async () => {
    await expect(createEtcdStorage({ endpoints: [] })).rejects.toThrow(/endpoints must be/);
    await expect(createEtcdStorage({ endpoints: ['127.0.0.1:2379'] })).rejects.toThrow(/http\(s\) URLs/);
  });
});

describe('etcd metrics and maintenance', () => {
  let e: RunningEtcd;
  let storage: Storage;
  beforeAll(async () => {
    // A tiny quota so the NOSPACE alarm can be reached quickly (a later flag overrides the product preset).
    e = await startEtcd({ extraArgs: ['--quota-backend-bytes=4194304'] });
    storage = await createEtcdStorage({ endpoints: [e.endpoint] });
  });
  afterAll(async () => {
    await storage?.close();
    await e?.stop();
  });

  it('reports status, RSS and tmpfs bytes', async () => {
    const status = await etcdStatus(e.endpoint);
    expect(status.version).toMatch(/^3\./);
    expect(status.dbSizeBytes).toBeGreaterThan(0);
    expect(status.dbSizeInUseBytes).toBeLessThanOrEqual(status.dbSizeBytes);
    expect(status.raftIndex).toBeGreaterThan(0);
    expect(status.alarms).toEqual([]);
    const rss = await processRssBytes(e.pid);
    expect(rss).toBeGreaterThan(5 * 1024 * 1024);
    expect(rss).toBeLessThan(2 * 1024 * 1024 * 1024);
    // etcd preallocates a 64 MB WAL segment in tmpfs before any data is written.
    expect(await dirBytes(e.dataDir)).toBeGreaterThan(64 * 1000 * 1000);
    await expect(processRssBytes(0)).rejects.toThrow(/positive integer/);
    await expect(etcdStatus('localhost:2379')).rejects.toThrow(/http\(s\) URLs/);
  });

  it('under NOSPACE only writes fail; compaction + defrag + disarm recover', async () => {
    const events: unknown[] = [];
    const watchErrors: Error[] = [];
    const handle = storage.watch(
      '/registry/blobs/',
      0,
      (ev) => events.push(ev),
      (err) => watchErrors.push(err),
    );
    const blob = 'x'.repeat(256 * 1024);
    let first = await storage.create('/registry/blobs/b', { blob, n: 0 });
    // Overwrite one key until the quota trips: every old version is garbage only a compaction frees.
    let nospace: Error | undefined;
    for (let n = 1; n < 200 && !nospace; n++) {
      first = await storage.update('/registry/blobs/b', { blob, n }, first.modRevision).catch((err: Error) => {
        nospace = err;
        return first;
      });
    }
    expect(nospace?.message).toMatch(/database space exceeded/);
    const full = await etcdStatus(e.endpoint);
    expect(full.alarms).toEqual(['NOSPACE']);
    // Repeated refusals must not take reads, deletes or open watches down with them.
    for (let i = 0; i < 4; i++)
      await expect(storage.create(`/registry/blobs/x${i}`, {})).rejects.toThrow(/database space exceeded/);
    // Reads still work. The key is at the last acknowledged revision or, as seen once under load, one after it
    // (an overwrite answered with an error had still been applied).
    const afterRefusals = (await storage.get('/registry/blobs/b'))!.modRevision;
    expect(afterRefusals - first.modRevision).toBeGreaterThanOrEqual(0);
    expect(afterRefusals - first.modRevision).toBeLessThanOrEqual(1);
    await storage.delete('/registry/blobs/b');
    await vi.waitFor(() => expect(events.at(-1)).toMatchObject({ type: 'delete' }), WAIT);
    expect(watchErrors).toEqual([]);

    const rev = await storage.currentRevision();
    await compactTo(e.endpoint, rev);
    await compactTo(e.endpoint, rev); // again: already compacted is fine
    await defragment(e.endpoint);
    const defragged = await etcdStatus(e.endpoint);
    expect(defragged.dbSizeBytes).toBeLessThan(full.dbSizeBytes / 2);
    // Still refused: NOSPACE outlives compaction and defragmentation until it is disarmed.
    await expect(storage.create('/registry/blobs/after', {})).rejects.toThrow(/database space exceeded/);

    expect(await disarmAlarms(e.endpoint)).toEqual(['NOSPACE']);
    expect((await etcdStatus(e.endpoint)).alarms).toEqual([]);
    await storage.create('/registry/blobs/after', { ok: true });
    expect((await storage.get('/registry/blobs/after'))!.value).toEqual({ ok: true });
    handle.stop();
  });
});
