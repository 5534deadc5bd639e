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
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  APISERVER_PORT,
  ETCD_CLIENT_PORT,
  ETCD_METRICS_PORT,
  ETCD_PEER_PORT,
  ETCD_PROXY_PORT,
} from '../../../../core/render/layout.ts';
import { binaryForImage, requireKubeBinary } from '../../kube-bins/index.ts';
import { cleanupOnExit } from '../../processes/exit-cleanup.ts';
import { freePorts } from '../../processes/free-ports.ts';
import {
  httpStatus,
  type ProcessExit,
  type SupervisedProcess,
  spawnSupervised,
  waitUntilReady,
} from '../../processes/supervise.ts';
import { type ArgTranslation, type HostLayout, translateContainerArgs } from './container-args.ts';

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
  /** Only the service account token is projected into a pool-spirit pod; process mode issues none (see materializeVolumes). */
  projected?: unknown;
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

export type ControlPlaneContainer = 'etcd' | 'kube-apiserver';

/** A container that ended after it was ready: what a kubelet puts in lastState.terminated. */
export interface ContainerExit extends ProcessExit {
  container: ControlPlaneContainer;
}

export interface RealControlPlane {
  /** https://127.0.0.1:<translated secure port> */
  apiServerUrl: string;
  /** The pool CA that signed the apiserver's serving certificate (PEM). */
  caPem: string;
  etcdClientUrl: string;
  /** etcd's data dir on this host (the translated --data-dir, under the emptyDir in /dev/shm). */
  etcdDataDir: string;
  pids: { etcd: number; apiServer: number };
  /** Per container, every arg that was rewritten. */
  translations: Record<ControlPlaneContainer, ArgTranslation[]>;
  /** The pod's layout on this host (volume dirs by mountPath per container, ports), for its other containers. */
  layoutFor(container: PodContainer): HostLayout;
  /** Host directory of a volume, by the volume's name. */
  volumeDir(volume: string): string | undefined;
  /** The kubelet's Secret volume sync, once: rewrites the files whose Secret content changed; their host paths. */
  refreshSecretVolumes(): Promise<string[]>;
  /** Settles when the first of the two processes ends without stop() having been called. */
  exited: Promise<ContainerExit>;
  workDir: string;
  stop(): Promise<void>;
}

export class ContainerExitError extends Error {
  readonly container: ControlPlaneContainer;
  readonly exitCode: number | null;
  readonly lastLines: string;

  constructor(container: ControlPlaneContainer, exitCode: number | null, lastLines: string) {
    super(
      `container ${container} exited (${exitCode === null ? 'killed' : `code ${exitCode}`}) before it was ready; it said:\n${lastLines}`,
    );
    this.name = 'ContainerExitError';
    this.container = container;
    this.exitCode = exitCode;
    this.lastLines = lastLines;
  }
}

const WORK_ROOT = '/dev/shm';

export async function startRealControlPlane(opts: StartRealControlPlaneOptions): Promise<RealControlPlane> {
  const log = opts.log ?? (() => undefined);
  const deadline = Date.now() + (opts.readyDeadlineMs ?? 60_000);
  const container = (name: ControlPlaneContainer) => {
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
  const processes: SupervisedProcess[] = [];
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const p of [...processes].reverse()) await p.stop();
      forget();
      await rm(workDir, { recursive: true, force: true });
    })());
  try {
    const volumes = await materializeVolumes(opts.pod.volumes ?? [], workDir, opts.secret, log);
    // Every port a pool-spirit pod may declare (a compat pod's etcd proxy too), whether it runs or not.
    const [apiPort, clientPort, peerPort, metricsPort, proxyPort] = await freePorts(5);
    const ports = {
      [APISERVER_PORT]: apiPort!,
      [ETCD_CLIENT_PORT]: clientPort!,
      [ETCD_PEER_PORT]: peerPort!,
      [ETCD_METRICS_PORT]: metricsPort!,
      [ETCD_PROXY_PORT]: proxyPort!,
    };
    const layoutFor = (c: PodContainer): HostLayout => ({
      mounts: Object.fromEntries(
        (c.volumeMounts ?? []).map((m) => [m.mountPath, volumes.dirs[m.name] ?? missingVolume(c.name, m.name)]),
      ),
      ports,
    });
    const start = (name: ControlPlaneContainer) => {
      const c = container(name);
      const translated = translateContainerArgs(c.args ?? [], layoutFor(c));
      for (const t of translated.translations) log(`${name}: --${t.flag}=${t.rendered} → ${t.translated}`);
      const proc = spawnSupervised(
        name,
        binaries[name],
        [...translated.args, ...observation(name)],
        join(workDir, `${name}.log`),
      );
      processes.push(proc);
      log(`${name}: started pid ${proc.pid}`);
      return { proc, translated };
    };
    const failed = (name: ControlPlaneContainer) => (exit: ProcessExit) =>
      new ContainerExitError(name, exit.exitCode, exit.lastLines);
    // POOLSPIRIT_PROCESS_AUDIT=1 (tests that observe what a real YurtHub asks of the apiserver): an audit log
    // of every request with its user, `<workDir>/audit.log`. Not part of the rendered pod; logged as such.
    const auditFiles = process.env.POOLSPIRIT_PROCESS_AUDIT === '1' ? await writeAuditPolicy(workDir) : undefined;
    const observation = (name: ControlPlaneContainer): string[] => {
      if (name !== 'kube-apiserver' || !auditFiles) return [];
      log(`kube-apiserver: observation flags added (not rendered): --audit-log-path=${auditFiles.log}`);
      return [
        `--audit-policy-file=${auditFiles.policy}`,
        `--audit-log-path=${auditFiles.log}`,
        '--audit-log-format=json',
        '--audit-log-mode=blocking',
      ];
    };
    const etcd = start('etcd');
    await waitUntilReady(
      etcd.proc,
      () => httpStatus(`http://127.0.0.1:${metricsPort}/health`),
      deadline,
      failed('etcd'),
    );
    const apiServer = start('kube-apiserver');
    const apiServerUrl = `https://127.0.0.1:${apiPort}`;
    await waitUntilReady(
      apiServer.proc,
      () => httpStatus(`${apiServerUrl}/readyz`, { caPem: volumes.caPem }),
      deadline,
      failed('kube-apiserver'),
    );
    const exited: Promise<ContainerExit> = Promise.race([etcd.proc.exited, apiServer.proc.exited]).then((exit) => {
      log(`${exit.name}: exited (${exit.signal ?? `code ${exit.exitCode}`})`);
      return { ...exit, container: exit.name as ControlPlaneContainer };
    });
    return {
      apiServerUrl,
      caPem: volumes.caPem,
      etcdClientUrl: `https://127.0.0.1:${clientPort}`,
      etcdDataDir: flagValue(etcd.translated.args, 'data-dir') ?? '',
      pids: { etcd: etcd.proc.pid, apiServer: apiServer.proc.pid },
      translations: { etcd: etcd.translated.translations, 'kube-apiserver': apiServer.translated.translations },
      layoutFor,
      volumeDir: (volume) => volumes.dirs[volume],
      refreshSecretVolumes: volumes.refresh,
      exited,
      workDir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  const prefix = `--${flag}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

function missingVolume(container: string, volume: string): never {
  throw new Error(`container ${container} mounts volume "${volume}", which the pod does not define`);
}

/**
 * Secret volumes as files (items, or every key), emptyDirs as directories; the pool CA is read on the way.
 * `refresh()` is the kubelet's Secret volume sync: it reads the Secrets again and replaces each file whose
 * content changed in one rename (as the kubelet's atomic writer swaps its data dir), so a reader never sees
 * half a file. It returns the host paths it replaced.
 */
async function materializeVolumes(
  volumes: PodVolume[],
  workDir: string,
  readSecret: (name: string) => Promise<SecretData>,
  log: (line: string) => void,
) {
  const dirs: Record<string, string> = {};
  let caPem = '';
  /** Per Secret volume file: the base64 content last written, to tell a change from a rewrite. */
  const written = new Map<string, string>();
  const secretFiles = async (v: PodVolume & { secret: NonNullable<PodVolume['secret']> }, dir: string) => {
    const data = await readSecret(v.secret.secretName);
    const items = v.secret.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    return {
      data,
      files: items.map((item) => {
        const value = data[item.key];
        if (value === undefined)
          throw new Error(`volume ${v.name}: Secret ${v.secret.secretName} has no key "${item.key}"`);
        return { file: join(dir, item.path), value };
      }),
    };
  };
  const write = async (file: string, value: string, mode: number) => {
    await mkdir(dirname(file), { recursive: true });
    const next = `${file}.${process.pid}.new`;
    await writeFile(next, Buffer.from(value, 'base64'), { mode });
    await rename(next, file);
    written.set(file, value);
  };
  for (const v of volumes) {
    const dir = join(workDir, 'volumes', v.name);
    if (v.secret) {
      const { data, files } = await secretFiles({ ...v, secret: v.secret }, dir);
      for (const f of files) await write(f.file, f.value, v.secret.defaultMode ?? 0o644);
      if (!caPem && data['ca.crt']) caPem = Buffer.from(data['ca.crt'], 'base64').toString('utf8');
      dirs[v.name] = dir;
    } else if (v.emptyDir) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      dirs[v.name] = dir;
    } else if (v.projected) {
      // No service account tokens are issued here: the agent is handed the host kubeconfig instead.
      await mkdir(dir, { recursive: true, mode: 0o700 });
      dirs[v.name] = dir;
      log(`volume ${v.name}: projected volume left empty (process mode issues no service account token)`);
    }
  }
  const refresh = async (): Promise<string[]> => {
    const replaced: string[] = [];
    for (const v of volumes) {
      const dir = dirs[v.name];
      if (!v.secret || !dir) continue;
      const { files } = await secretFiles({ ...v, secret: v.secret }, dir);
      for (const f of files) {
        if (written.get(f.file) === f.value) continue;
        await write(f.file, f.value, v.secret.defaultMode ?? 0o644);
        replaced.push(f.file);
        log(`volume ${v.name}: ${f.file.slice(dir.length + 1)} updated from Secret ${v.secret.secretName}`);
      }
    }
    return replaced;
  };
  return { dirs, caPem, refresh };
}

/** A Metadata-level audit policy (who did what to which object, no bodies) and where its log goes. */
async function writeAuditPolicy(workDir: string): Promise<{ policy: string; log: string }> {
  const policy = join(workDir, 'audit-policy.yaml');
  await writeFile(
    policy,
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n',
    { mode: 0o600 },
  );
  return { policy, log: join(workDir, 'audit.log') };
}
