import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.ts';

const MAIN = fileURLToPath(new URL('../../../cli/main.ts', import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe('spiritctl local cluster', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-cluster-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('serves on a free port, prints one ready line with the URL, writes the kubeconfig, stops on SIGTERM', async () => {
    const kubeconfig = join(dir, 'kc');
    const p = run(['local', 'cluster', '--port', '0', '--kubeconfig', kubeconfig]);
    await waitFor(() => p.stdout().includes('ready'), 30_000, 'the ready line').catch((err: Error) => {
      throw new Error(`${err.message}; stderr: ${p.stderr()}`);
    });
    const lines = p.stdout().trim().split('\n');
    expect(lines).toHaveLength(1);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(lines[0])![0];
    expect(await (await fetch(`${url}/healthz`)).text()).toBe('ok');
    expect(await readFile(kubeconfig, 'utf8')).toContain(`server: ${url}`);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('rejects bad flags with exit code 2 and a message naming the flag', async () => {
    const p = run(['local', 'cluster', '--store', 'disk']);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toContain('--store must be one of memory|etcd, got "disk"');
  });
});
