import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStateDir, fleetStateDir, keptClusters, markSeeded } from '../../../../dev/local/fleet/state-dir.ts';

describe('the fleet state dir', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-state-dir-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses kept state held by a live process, takes over from a dead one, and releases it', async () => {
    const state = fleetStateDir({ stateDir: join(dir, 'claim'), persist: true });
    await mkdir(state.dir, { recursive: true });
    const pidFile = join(state.dir, 'local-up.pid');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      await writeFile(pidFile, `${other.pid}\n`);
      await expect(claimStateDir(state)).rejects.toThrow(
        new RegExp(`in use by another local up \\(pid ${other.pid}\\).*--state-dir`),
      );
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    // The same pid file, its process now gone (as after a kill -9): taken over.
    const release = await claimStateDir(state);
    expect((await readFile(pidFile, 'utf8')).trim()).toBe(String(process.pid));
    await release();
    await expect(readFile(pidFile, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('counts a kept cluster as resumable only once it was fully seeded', async () => {
    const state = fleetStateDir({ stateDir: join(dir, 'kept'), persist: true });
    expect(await keptClusters(state)).toEqual({ ids: [], seeded: new Set() });
    for (const id of ['cluster-01', 'cluster-02', 'cluster-03'])
      await mkdir(state.etcdDataDir(id)!, { recursive: true });
    await mkdir(join(state.dir, 'etcd', 'not-a-cluster'));
    await markSeeded(state, 'cluster-01');
    await markSeeded(state, 'cluster-03');
    expect(await keptClusters(state)).toEqual({
      ids: ['cluster-01', 'cluster-02', 'cluster-03'],
      seeded: new Set(['cluster-01', 'cluster-03']),
    });
    // Without persistence nothing is kept, whatever the directory holds.
    expect(await keptClusters(fleetStateDir({ stateDir: state.dir }))).toEqual({ ids: [], seeded: new Set() });
    expect(fleetStateDir({ stateDir: state.dir }).etcdDataDir('cluster-01')).toBeUndefined();
  });
});
