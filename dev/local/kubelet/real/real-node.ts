/**
 * A real Kubernetes node on this machine: Debian's containerd and runc, and the kubelet built from the pinned
 * module (`npm run kube-bins`), joined to a real local control plane (dev/local/real-cluster) with a client
 * certificate for system:node:<name>, labelled into a NodePool. Pods scheduled there run as on any node:
 * images from the node's containerd, the kubelet's own probes, securityContext, emptyDirs and cgroup limits.
 *
 * Each node has a network namespace of its own (loopback-netns.ts holds it): containerd and the kubelet run
 * in it, the pods' bridge and addresses exist only there, the control plane is reached through a relayed
 * loopback port, and the `kubernetes` Service address through service-relay.ts. The machine's own network is
 * never touched. Files live in one directory (config.ts); stop() removes the containers, the mounts, the
 * cgroups and the directory. Needs root.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { type LoopbackNamespace, startLoopbackNamespace } from '../../openyurt/loopback-netns.ts';
import { cleanupOnExit } from '../../processes/exit-cleanup.ts';
import type { ProcessExit } from '../../processes/supervise.ts';
import type { ClientIdentity } from '../../real-cluster/control-plane.ts';
import {
  cniConfig,
  containerdConfig,
  kubeletArgs,
  kubeletConfiguration,
  nodeAddresses,
  nodePaths,
  type RealNodeLayout,
} from './config.ts';
import { ctr, listContainers, type NodeContainer, removeAllContainers } from './ctr.ts';
import { type GroupProcess, spawnGroup } from './group-process.ts';
import {
  cgroupHierarchies,
  killQuietly,
  processesMentioning,
  removeCgroupTree,
  removeNamespaceFile,
  unmountUnder,
} from './host-cleanup.ts';
import { importImage, requireLocalImage } from './node-images.ts';
import { requireRealNodePrerequisites } from './prerequisites.ts';

const run = promisify(execFile);
const SERVICE_RELAY = fileURLToPath(new URL('./service-relay.ts', import.meta.url));
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** What a node needs of its control plane (RealHostCluster offers it). */
export interface NodeControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  caPem: string;
  writeKubeconfig(path: string, identity: ClientIdentity): Promise<unknown>;
}

export interface StartRealNodeOptions {
  name: string;
  pool: string;
  controlPlane: NodeControlPlane;
  /** Admin access: to wait for the Node to be Ready, and to read the `kubernetes` Service's address. */
  admin: KubeConfig;
  /** Image names as `npm run images` builds them; the first is the sandbox ("pause") image. */
  images: readonly string[];
  log?: (line: string) => void;
  readyDeadlineMs?: number;
}

export interface RealNode {
  name: string;
  pool: string;
  dir: string;
  containerdSocket: string;
  /** The node's network namespace (/proc/<pid>/ns/net). */
  netnsPath: string;
  /** The kubelet's cgroup root, e.g. /pool-spirit-<name> (pods under <root>/kubepods/…). */
  cgroupRoot: string;
  pids(): { kubelet: number; containerd: number };
  /** Every container of the node's containerd, with its CRI labels, OCI spec and task pid. */
  containers(): Promise<NodeContainer[]>;
  /** Kills a component (SIGKILL, as a crash) and starts it again with the same config; resolves once restarted. */
  restart(component: 'kubelet' | 'containerd'): Promise<void>;
  /** Settles when containerd or the kubelet ends on its own. */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

export class RealNodeStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RealNodeStartError';
  }
}

export async function startRealNode(opts: StartRealNodeOptions): Promise<RealNode> {
  const binaries = requireRealNodePrerequisites();
  const log = opts.log ?? (() => undefined);
  const deadline = Date.now() + (opts.readyDeadlineMs ?? 120_000);
  const images = opts.images.map(requireLocalImage);
  const sandboxImage = images[0]!.refs[0]!;
  // Short: containerd's socket and the relays' sockets must fit a unix socket path.
  const dir = await mkdtemp('/tmp/ps-node-');
  const layout: RealNodeLayout = {
    dir,
    nodeName: opts.name,
    pool: opts.pool,
    ...nodeAddresses(opts.name),
    sandboxImage,
    cgroupRoot: `/pool-spirit-${opts.name}`,
  };
  const paths = nodePaths(dir);
  const apiPort = Number(new URL(opts.controlPlane.url).port);
  let ns: LoopbackNamespace | undefined;
  let relay: GroupProcess | undefined;
  let containerd: GroupProcess | undefined;
  let kubelet: GroupProcess | undefined;
  let sandboxNetns: string[] = [];

  /** Synchronous last resort (process exit): processes, shims, mounts, cgroups, files. */
  const sweep = () => {
    for (const pid of processesMentioning(paths.containerdSocket)) killQuietly(pid);
    for (const file of sandboxNetns) removeNamespaceFile(file);
    unmountUnder([dir]);
    removeCgroupTree(layout.cgroupRoot);
    rmSync(dir, { recursive: true, force: true });
  };
  const forgetSweep = cleanupOnExit(sweep);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await kubelet?.stop();
      if (containerd && !containerd.ended()) {
        sandboxNetns = await removeAllContainers(paths.containerdSocket).catch(() => sandboxNetns);
      }
      await containerd?.stop();
      await relay?.stop();
      await ns?.stop();
      sweep();
      forgetSweep();
    })());

  const startContainerd = () => {
    const proc = spawnGroup(
      'containerd',
      ns!.command(binaries.containerd, ['--config', paths.containerdConfig], { PATH }),
      join(dir, 'containerd.log'),
    );
    log(`${opts.name} containerd: pid ${proc.pid}`);
    return proc;
  };
  const startKubelet = () => {
    const proc = spawnGroup(
      'kubelet',
      ns!.command(binaries.kubelet, kubeletArgs(layout), { PATH }),
      join(dir, 'kubelet.log'),
    );
    log(`${opts.name} kubelet: pid ${proc.pid}`);
    return proc;
  };

  try {
    for (const d of [join(dir, 'containerd'), paths.cniConfDir, paths.kubeletRoot, paths.kubeletCertDir])
      await mkdir(d, { recursive: true, mode: 0o700 });
    await writeFile(paths.containerdConfig, containerdConfig(layout));
    await writeFile(join(paths.cniConfDir, '10-pool-spirit-node.conflist'), cniConfig(layout));
    await writeFile(paths.kubeletConfig, kubeletConfiguration(layout));
    await writeFile(paths.caCert, opts.controlPlane.caPem);
    await opts.controlPlane.writeKubeconfig(paths.kubeconfig, {
      user: `system:node:${opts.name}`,
      groups: ['system:nodes'],
    });
    // The kubelet insists its cgroup root exists in every hierarchy it uses.
    for (const hierarchy of cgroupHierarchies()) mkdirSync(join(hierarchy, layout.cgroupRoot), { recursive: true });

    const serviceIp = await kubernetesServiceIp(opts.admin);
    ns = await startLoopbackNamespace({ dir: join(dir, 'ns'), inbound: [], outbound: [apiPort] });
    const inNs = (args: string[]) => run(binaries.nsenter, [`--net=${ns!.netnsPath}`, '--', ...args]);
    // On the namespace's loopback (no dummy interfaces on every kernel): the node's address, and the Service's.
    await inNs([binaries.ip, 'addr', 'add', `${layout.nodeIp}/32`, 'dev', 'lo']);
    await inNs([binaries.ip, 'addr', 'add', `${serviceIp}/32`, 'dev', 'lo']);
    relay = spawnGroup(
      'service-relay',
      ns.command(
        process.execPath,
        [
          SERVICE_RELAY,
          JSON.stringify({ listen: { host: serviceIp, port: 443 }, target: { host: '127.0.0.1', port: apiPort } }),
        ],
        { PATH },
      ),
      join(dir, 'service-relay.log'),
    );

    containerd = startContainerd();
    await waitFor(
      'containerd',
      containerd,
      async () => {
        await ctr(paths.containerdSocket, ['version'], 5_000);
        return true;
      },
      deadline,
    );
    for (const image of images) await importImage(paths.containerdSocket, image);
    log(`${opts.name} images: ${images.map((i) => i.refs[0]).join(', ')}`);

    kubelet = startKubelet();
    const api = RawObjectApi.fromKubeConfig(opts.admin);
    await waitFor('kubelet', kubelet, async () => nodeIsReady(api, opts.name), deadline);
    log(`${opts.name} Ready (pool ${opts.pool})`);
  } catch (err) {
    await stop();
    throw err;
  }

  let current = { containerd: containerd, kubelet: kubelet };
  let restarting: Promise<void> | undefined;
  const unexpected = (p: GroupProcess): Promise<ProcessExit> =>
    p.exited.then(async (exit) => {
      await restarting;
      const now = p.name === 'kubelet' ? current.kubelet : current.containerd;
      // An exit during restart() is the one asked for: wait on the replacement.
      return now === p ? exit : unexpected(now);
    });
  return {
    name: opts.name,
    pool: opts.pool,
    dir,
    containerdSocket: paths.containerdSocket,
    netnsPath: ns.netnsPath,
    cgroupRoot: layout.cgroupRoot,
    pids: () => ({ kubelet: current.kubelet.pid, containerd: current.containerd.pid }),
    containers: () => listContainers(paths.containerdSocket),
    async restart(component) {
      const old = current[component];
      let done!: () => void;
      restarting = new Promise((r) => (done = r));
      try {
        await old.stop(0);
        const next = component === 'kubelet' ? startKubelet() : startContainerd();
        current = { ...current, [component]: next };
        kubelet = current.kubelet;
        containerd = current.containerd;
        if (component === 'containerd')
          await waitFor(
            'containerd',
            next,
            async () => {
              await ctr(paths.containerdSocket, ['version'], 5_000);
              return true;
            },
            Date.now() + 30_000,
          );
      } finally {
        done();
      }
    },
    exited: Promise.race([unexpected(containerd), unexpected(kubelet)]),
    stop,
  };
}

/** The `kubernetes` Service's ClusterIP: the address a pod's in-cluster client dials (KUBERNETES_SERVICE_HOST). */
async function kubernetesServiceIp(admin: KubeConfig): Promise<string> {
  const api = RawObjectApi.fromKubeConfig(admin);
  const svc = await api.requestJson<{ spec?: { clusterIP?: string } }>(
    HttpMethod.GET,
    '/api/v1/namespaces/default/services/kubernetes',
  );
  const ip = svc.spec?.clusterIP;
  if (!ip || !/^\d+\.\d+\.\d+\.\d+$/.test(ip))
    throw new RealNodeStartError(`the kubernetes Service has no IPv4 clusterIP (${String(ip)})`);
  return ip;
}

async function nodeIsReady(api: RawObjectApi, name: string): Promise<boolean> {
  try {
    const node = await api.requestJson<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
      HttpMethod.GET,
      `/api/v1/nodes/${name}`,
    );
    return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  } catch {
    return false;
  }
}

/** Polls `check` until true; fails with the process's last lines if it exits first or the deadline passes. */
async function waitFor(what: string, proc: GroupProcess, check: () => Promise<boolean>, deadline: number) {
  let last = 'not yet';
  while (Date.now() < deadline) {
    const end = proc.ended();
    if (end)
      throw new RealNodeStartError(
        `${what} exited (${end.signal ?? `code ${end.exitCode}`}) before it was ready; it said:\n${end.lastLines}`,
      );
    try {
      if (await check()) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new RealNodeStartError(`${what} not ready in time (${last}); it said:\n${proc.lastLines(30)}`);
}
