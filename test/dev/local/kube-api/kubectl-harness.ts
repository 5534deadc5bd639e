/**
 * Drives the real kubectl against a local cluster: one cluster per backend, a kubeconfig and a discovery
 * cache dir of its own, every call asynchronous (the API server runs in this same process, so a
 * synchronous child process would block it).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalCluster, type Storage, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';
import { KUBECTL, requireKubeBinary } from '../../../../dev/local/kube-bins/index.ts';
import { waitFor } from '../../../support/wait.ts';

export { KUBECTL };

/** The suite is the judge of the API's fidelity: without kubectl it must fail, never skip. */
export function requireKubectl(): void {
  requireKubeBinary('kubectl');
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Backend = 'memory' | 'etcd';

export interface KubectlEnv {
  cluster: LocalCluster;
  dir: string;
  kubeconfig: string;
  /** Runs kubectl; never throws on a non-zero exit (assert on `code`). */
  kubectl(args: string[], opts?: { stdin?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** kubectl that must succeed; returns stdout. */
  ok(args: string[], opts?: { stdin?: string }): Promise<string>;
  /** Writes a file in the env's temp dir and returns its path. */
  file(name: string, content: string): Promise<string>;
  /** Starts a long-running kubectl (e.g. `get -w`) and lets the test read its output as it comes. */
  stream(args: string[]): KubectlStream;
  stop(): Promise<void>;
}

export interface KubectlStream {
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves once stdout satisfies `predicate`; rejects on exit or deadline. */
  waitFor(predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number>;
  readonly running: () => boolean;
  kill(): Promise<void>;
}

async function startStorage(backend: Backend): Promise<{ storage?: Storage; close(): Promise<void> }> {
  if (backend === 'memory') return { close: async () => {} };
  const { startEtcd } = await import('../../../../dev/local/etcd/launch.ts');
  const { createEtcdStorage } = await import('../../../../dev/local/kube-api/storage/etcd.ts');
  const etcd = await startEtcd();
  try {
    const storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
    return {
      storage,
      close: async () => {
        await storage.close();
        await etcd.stop();
      },
    };
  } catch (err) {
    await etcd.stop();
    throw err;
  }
}

export async function startKubectlEnv(backend: Backend): Promise<KubectlEnv> {
  requireKubectl();
  const dir = await mkdtemp(join(tmpdir(), `kubectl-e2e-${backend}-`));
  const backing = await startStorage(backend).catch(async (err) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  const cluster = await startLocalCluster({
    storage: backing.storage,
    name: `e2e-${backend}`,
    bookmarkIntervalMs: 1000,
  }).catch(async (err) => {
    await backing.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  const kubeconfig = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfig);
  // Keep kubectl's discovery cache and config lookups inside the temp dir.
  const baseArgs = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')];
  const env = { ...process.env, HOME: dir, KUBECONFIG: kubeconfig };
  const streams = new Set<ChildProcess>();

  const kubectl: KubectlEnv['kubectl'] = (args, opts = {}) =>
    new Promise((resolve) => {
      const child = execFile(
        KUBECTL,
        [...baseArgs, ...args],
        { env, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : 1
            : 0;
          resolve({ code, stdout, stderr });
        },
      );
      if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
      else child.stdin!.end();
    });

  const ok: KubectlEnv['ok'] = async (args, opts) => {
    const r = await kubectl(args, opts);
    if (r.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  };

  const stream = (args: string[]): KubectlStream => {
    const child = spawn(KUBECTL, [...baseArgs, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    streams.add(child);
    let out = '';
    let err = '';
    let alive = true;
    const listeners = new Set<() => void>();
    child.stdout!.on('data', (d) => {
      out += d;
      for (const l of listeners) l();
    });
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<number>((resolve) =>
      child.on('exit', (code, signal) => {
        alive = false;
        streams.delete(child);
        for (const l of listeners) l();
        resolve(code ?? (signal ? 128 : 1));
      }),
    );
    return {
      stdout: () => out,
      stderr: () => err,
      exited,
      running: () => alive,
      waitFor(predicate, timeoutMs = 15_000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            if (predicate(out)) {
              done();
              resolve(out);
            } else if (!alive) {
              done();
              reject(
                new Error(
                  `kubectl ${args.join(' ')} exited before the expected output\nstdout: ${out}\nstderr: ${err}`,
                ),
              );
            }
          };
          const timer = setTimeout(() => {
            done();
            reject(
              new Error(
                `timed out after ${timeoutMs} ms waiting for kubectl ${args.join(' ')}\nstdout: ${out}\nstderr: ${err}`,
              ),
            );
          }, timeoutMs);
          const done = () => {
            clearTimeout(timer);
            listeners.delete(check);
          };
          listeners.add(check);
          check();
        });
      },
      async kill() {
        if (alive) child.kill('SIGTERM');
        await exited;
      },
    };
  };

  return {
    cluster,
    dir,
    kubeconfig,
    kubectl,
    ok,
    stream,
    async file(name, content) {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
    async stop() {
      for (const c of streams) c.kill('SIGKILL');
      await cluster.stop();
      await backing.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `fn` until it returns a truthy value (see test/support/wait.ts). */
export function eventually<T>(fn: () => Promise<T>, what: string, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  return waitFor(fn, timeoutMs, what, intervalMs);
}
