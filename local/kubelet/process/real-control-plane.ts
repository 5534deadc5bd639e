/**
 * A pool-spirit pod's etcd and kube-apiserver as the real binaries (built by `npm run kube-bins`), each its
 * own OS process, run with exactly the args the renderer wrote: only the paths of mounted volumes and the
 * pod's ports are translated (container-args.ts), and the translation is logged. Volumes are laid out as a
 * kubelet would: a Secret volume's items as files with the volume's mode, an emptyDir with `medium: Memory`
 * as a directory in /dev/shm.
 *
 * A binary that rejects a flag or exits before it is ready fails the start with the binary's own last lines,
 * the way a crash-looping container shows them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { APISERVER_PORT, ETCD_CLIENT_PORT, ETCD_METRICS_PORT, ETCD_PEER_PORT } from '../../../core/render/layout.ts';
import { freePorts } from '../../etcd/launch.ts';
import { binaryForImage, requireKubeBinary } from '../../kube-bins/index.ts';
import { translateContainerArgs, type ArgTranslation } from './container-args.ts';
import { cleanupOnExit } from './exit-cleanup.ts';

interface VolumeMount {
  name: string;
  mountPath: string;
}
export interface PodContainer {
  name: string;
  image?: string;
  args?: string[];
  volumeMounts?: VolumeMount[];
}
export interface PodVolume {
  name: string;
  secret?: { secretName: string; defaultMode?: number; items?: Array<{ key: string; path: string }> };
  emptyDir?: { medium?: string };
}
export interface PodSpec {
  containers: PodContainer[];
  volumes?: PodVolume[];
}

/** A Secret's `data`, base64 as the API serves it. */
export type SecretData = Record<string, string>;

export interface StartRealControlPlaneOptions {
  pod: PodSpec;
  /** Reads a Secret the pod mounts, by name. */
  secret(name: string): Promise<SecretData>;
  /** Where translations and process lifecycle lines go (default: nowhere). */
  log?: (line: string) => void;
  readyDeadlineMs?: number;
}

export interface RealControlPlane {
  /** https://127.0.0.1:<translated secure port> */
  apiServerUrl: string;
  /** The pool CA that signed the apiserver's serving certificate (PEM). */
  caPem: string;
  etcdClientUrl: string;
  pids: { etcd: number; apiServer: number };
  /** Per container, every arg that was rewritten. */
  translations: Record<'etcd' | 'kube-apiserver', ArgTranslation[]>;
  workDir: string;
  stop(): Promise<void>;
}

export class ContainerExitError extends Error {
  readonly container: string;
  readonly exitCode: number | null;
  readonly lastLines: string;

  constructor(container: string, exitCode: number | null, lastLines: string) {
    super(`container ${container} exited (${exitCode === null ? 'killed' : `code ${exitCode}`}) before it was ready; it said:\n${lastLines}`);
    this.name = 'ContainerExitError';
    this.container = container;
    this.exitCode = exitCode;
    this.lastLines = lastLines;
  }
}

const WORK_ROOT = '/dev/shm';
const STOP_GRACE_MS = 5_000;

export async function startRealControlPlane(opts: StartRealControlPlaneOptions): Promise<RealControlPlane> {
  const log = opts.log ?? (() => undefined);
  const deadline = Date.now() + (opts.readyDeadlineMs ?? 60_000);
  const container = (name: 'etcd' | 'kube-apiserver') => {
    const found = opts.pod.containers.find((c) => c.name === name);
    if (!found) throw new Error(`pod has no container "${name}"`);
    return found;
  };
  // The release in each container's image tag picks the build that runs it.
  const binaries = {
    etcd: requireKubeBinary(binaryForImage('etcd', container('etcd').image ?? '')),
    'kube-apiserver': requireKubeBinary(binaryForImage('kube-apiserver', container('kube-apiserver').image ?? '')),
  };
  const workDir = await mkdtemp(join(WORK_ROOT, 'pool-spirit-real-'));
  const forget = cleanupOnExit(() => rmSync(workDir, { recursive: true, force: true }));
  const children: ChildProcess[] = [];
  const forgetChildren: Array<() => void> = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopChild(child);
    for (const f of forgetChildren) f();
    forget();
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    const volumes = await materializeVolumes(opts.pod.volumes ?? [], workDir, opts.secret);
    const [apiPort, clientPort, peerPort, metricsPort] = await freePorts(4);
    const ports = { [APISERVER_PORT]: apiPort!, [ETCD_CLIENT_PORT]: clientPort!, [ETCD_PEER_PORT]: peerPort!, [ETCD_METRICS_PORT]: metricsPort! };
    const start = (name: 'etcd' | 'kube-apiserver') => {
      const c = container(name);
      const mounts = Object.fromEntries((c.volumeMounts ?? []).map((m) => [m.mountPath, volumes.dirs[m.name] ?? missingVolume(name, m.name)]));
      const translated = translateContainerArgs(c.args ?? [], { mounts, ports });
      for (const t of translated.translations) log(`${name}: --${t.flag}=${t.rendered} → ${t.translated}`);
      const logFile = join(workDir, `${name}.log`);
      const fd = openSync(logFile, 'a');
      const child = spawn(binaries[name], translated.args, { stdio: ['ignore', fd, fd] });
      closeSync(fd);
      children.push(child);
      forgetChildren.push(cleanupOnExit(() => child.kill('SIGKILL')));
      log(`${name}: started pid ${child.pid}`);
      return { child, logFile, translations: translated.translations };
    };
    const etcd = start('etcd');
    await waitReady('etcd', etcd, () => get(`http://127.0.0.1:${metricsPort}/health`), deadline);
    const apiServer = start('kube-apiserver');
    const apiServerUrl = `https://127.0.0.1:${apiPort}`;
    await waitReady('kube-apiserver', apiServer, () => get(`${apiServerUrl}/readyz`, volumes.caPem), deadline);
    return {
      apiServerUrl,
      caPem: volumes.caPem,
      etcdClientUrl: `https://127.0.0.1:${clientPort}`,
      pids: { etcd: etcd.child.pid!, apiServer: apiServer.child.pid! },
      translations: { etcd: etcd.translations, 'kube-apiserver': apiServer.translations },
      workDir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function missingVolume(container: string, volume: string): never {
  throw new Error(`container ${container} mounts volume "${volume}", which the pod does not define`);
}

/** Secret volumes as files (items, or every key), emptyDirs as directories; the pool CA is read on the way. */
async function materializeVolumes(volumes: PodVolume[], workDir: string, readSecret: (name: string) => Promise<SecretData>) {
  const dirs: Record<string, string> = {};
  let caPem = '';
  for (const v of volumes) {
    const dir = join(workDir, 'volumes', v.name);
    if (v.secret) {
      const data = await readSecret(v.secret.secretName);
      const items = v.secret.items ?? Object.keys(data).map((key) => ({ key, path: key }));
      for (const item of items) {
        const value = data[item.key];
        if (value === undefined) throw new Error(`volume ${v.name}: Secret ${v.secret.secretName} has no key "${item.key}"`);
        const file = join(dir, item.path);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, Buffer.from(value, 'base64'), { mode: v.secret.defaultMode ?? 0o644 });
      }
      if (!caPem && data['ca.crt']) caPem = Buffer.from(data['ca.crt'], 'base64').toString('utf8');
      dirs[v.name] = dir;
    } else if (v.emptyDir) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      dirs[v.name] = dir;
    }
  }
  return { dirs, caPem };
}

async function waitReady(name: string, proc: { child: ChildProcess; logFile: string }, probe: () => Promise<number>, deadline: number): Promise<void> {
  let exited: { code: number | null } | undefined;
  proc.child.once('exit', (code) => {
    exited = { code };
  });
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exited) throw new ContainerExitError(name, exited.code, lastLines(proc.logFile));
    try {
      const status = await probe();
      if (status === 200) return;
      last = `HTTP ${status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`container ${name} not ready in time: ${last}; it said:\n${lastLines(proc.logFile)}`);
}

function lastLines(file: string, count = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no output)';
  }
}

function get(url: string, caPem?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: import('node:http').IncomingMessage) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    };
    const req = url.startsWith('https:') ? httpsRequest(url, { ca: caPem, timeout: 2_000 }, onResponse) : httpRequest(url, { timeout: 2_000 }, onResponse);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}
