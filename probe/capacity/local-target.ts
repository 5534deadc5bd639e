/**
 * The `--local` target: a pool-spirit's storage half for real — etcd (the pinned 3.6 build) with its data
 * dir in /dev/shm, started with the given settings — and the project's local Kubernetes API on top of it.
 *
 * The API runs as its own process (`spiritctl local cluster --store etcd`), as kube-apiserver does in a
 * pool-spirit pod: its RSS is then measurable apart from etcd's, and the probe's 500 contenders and load
 * workers do not share an event loop with the server they measure (a timer delayed by the server's work
 * would show up as a false renew-deadline miss).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flagArgs, startEtcd, type RunningEtcd } from '../../local/etcd/launch.ts';
import type { EtcdSettings } from './etcd-settings.ts';

const CLI_MAIN = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const SETPRIV = '/usr/bin/setpriv';
const READY_TIMEOUT_MS = 30_000;

export interface LocalTarget {
  url: string;
  etcd: RunningEtcd;
  apiPid: number;
  settings: EtcdSettings;
  stop(): Promise<void>;
}

export async function startLocalTarget(settings: EtcdSettings): Promise<LocalTarget> {
  const etcd = await startEtcd({ extraArgs: flagArgs(settings.flags) });
  const dir = await mkdtemp(join(tmpdir(), 'capacity-probe-'));
  let api: { child: ChildProcess; url: string } | undefined;
  try {
    api = await startApiProcess(etcd.endpoint, join(dir, 'kubeconfig'));
  } catch (err) {
    await etcd.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const { child, url } = api;
  let stopping: Promise<void> | undefined;
  return {
    url,
    etcd,
    apiPid: child.pid!,
    settings,
    stop: () =>
      (stopping ??= (async () => {
        await stopChild(child);
        await etcd.stop();
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}

function startApiProcess(etcdEndpoint: string, kubeconfig: string): Promise<{ child: ChildProcess; url: string }> {
  const args = [CLI_MAIN, 'local', 'cluster', '--store', 'etcd', '--etcd-endpoints', etcdEndpoint, '--port', '0', '--kubeconfig', kubeconfig, '--name', 'capacity-probe'];
  // With setpriv the API dies with us even if we are killed before our exit handlers run.
  const usePdeathsig = (() => {
    try {
      return readFileSync(SETPRIV).includes('pdeathsig');
    } catch {
      return false;
    }
  })();
  const child = usePdeathsig
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(`not ready within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`local API process ${why}${err.trim() ? `: ${err.trim().split('\n').slice(-5).join('\n')}` : ''}`));
    };
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /ready at (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, url: match[1] });
      }
    });
    child.once('exit', (code, signal) => fail(`exited during startup (${signal ?? `code ${code}`})`));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
