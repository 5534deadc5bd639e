import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { beforeAll, describe, expect, it } from 'vitest';
import { alive, waitFor } from './world.ts';

const CHILD = join(import.meta.dirname, 'fixtures', 'pool-spirit-child.ts');

/** Starts the child, waits for its pool-spirit, returns what it runs and how the child ended. */
async function runChild() {
  const child = spawn(process.execPath, [CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void ended.then((how) => reject(new Error(`child ended before its pool-spirit ran: ${JSON.stringify(how)}`)));
  });
  const running = JSON.parse(line) as { pids: number[]; dataDir: string; workDir: string };
  expect(running.pids.map(alive)).toEqual([true, true]);
  expect(existsSync(running.dataDir) && existsSync(running.workDir)).toBe(true);
  return { child, ended, running };
}

const leftNothing = (r: { pids: number[]; dataDir: string; workDir: string }) =>
  waitFor(
    () => !r.pids.some(alive) && !existsSync(r.dataDir) && !existsSync(r.workDir),
    5_000,
    'etcd, kube-apiserver, the data dir and the work dir gone',
  );

describe('process mode: nothing outlives the process that started a pool-spirit', () => {
  // Both children start together: most of their time is kube-apiserver becoming ready.
  let children: Array<Awaited<ReturnType<typeof runChild>>>;
  beforeAll(async () => {
    children = await Promise.all([runChild(), runChild()]);
  }, 90_000);

  it('on SIGTERM, with no other listener: cleans up, then terminates by the signal as Node would', async () => {
    const { child, ended, running } = children[0];
    child.kill('SIGTERM');
    expect(await ended).toEqual({ code: null, signal: 'SIGTERM' });
    await leftNothing(running);
  }, 10_000);

  it('on process.exit() without stop()', async () => {
    const { child, ended, running } = children[1];
    child.stdin!.end('exit\n');
    expect(await ended).toEqual({ code: 0, signal: null });
    await leftNothing(running);
  }, 10_000);
});
