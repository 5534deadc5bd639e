import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.ts';
import { isConverged, type LocalUpChild, startLocalUp } from './local-up-child.ts';

/** pid → parent pid of every process now, from /proc/<pid>/stat (the command name may hold spaces and parens). */
async function parents(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) out.set(Number(entry), ppid);
  }
  return out;
}

async function descendants(pid: number): Promise<number[]> {
  const ppids = await parents();
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length; ) {
    const next = [...ppids].filter(([, ppid]) => frontier.includes(ppid)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** Gone, or a zombie its new parent has not reaped yet: either way nothing runs. */
async function running(pid: number): Promise<boolean> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return status !== '' && !/^State:\s+Z/m.test(status);
}

/**
 * Whatever `local up` started ends with it, however it ends: Ctrl-C, a TERM, or a kill -9 that runs none of
 * its handlers. The fleet runs its clusters in worker threads, each starting its clusters' etcd processes.
 */
describe('local up with cluster threads: no child outlives it', () => {
  let dir: string;
  const children: LocalUpChild[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-local-up-children-'));
  });
  afterAll(async () => {
    for (const c of children) await c.kill9();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['SIGKILL', 'SIGTERM', 'SIGINT'] as const)(
    '%s: every process it started is gone once it is',
    async (signal) => {
      const up = startLocalUp([
        ...['--clusters', '2', '--pools', '1', '--nodes-per-pool', '1', '--cloud-pools', '0', '--ready-delay', '20'],
        ...['--cluster-threads', '2', '--store', 'etcd', '--state-dir', join(dir, signal)],
      ]);
      children.push(up);
      await up.waitForLine(isConverged, 120_000, 'converged');
      expect(up.lines.some((l) => /2 cluster\(s\) in 2 cluster thread\(s\)/.test(l.message ?? ''))).toBe(true);
      const started = await descendants(up.child.pid!);
      // One etcd per cluster, started from the cluster threads (under setpriv, which execs etcd in place).
      const commands = await Promise.all(
        started.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
      );
      expect(commands.filter((c) => c.includes('etcd')).length).toBeGreaterThanOrEqual(2);

      up.child.kill(signal);
      const exit = await up.exited;
      expect(exit.signal ?? exit.code).toBe(signal === 'SIGKILL' ? 'SIGKILL' : 0);
      const survivors = await waitFor(
        async () => {
          const left = [];
          for (const pid of started) if (await running(pid)) left.push(pid);
          return left.length === 0 ? left : undefined;
        },
        20_000,
        `the children of local up (${started.join(', ')}) to end after ${signal}`,
      );
      expect(survivors).toEqual([]);
    },
    180_000,
  );
});
