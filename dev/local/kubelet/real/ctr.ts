/**
 * containerd as a node's owner reads and clears it: `ctr` (Debian's containerd ships it) against the node's
 * own socket, namespace k8s.io (the CRI plugin's). Used to import the images, to show what runs (the
 * containers of a pod, their init pids and OCI specs) and to remove everything when the node stops.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const CTR = '/usr/bin/ctr';

export async function ctr(socket: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const { stdout } = await run(CTR, ['--address', socket, '--namespace', 'k8s.io', ...args], {
    timeout: timeoutMs,
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

/** A container as containerd holds it: CRI's labels (pod, container name) and its OCI runtime spec. */
export interface NodeContainer {
  id: string;
  labels: Record<string, string>;
  /** The OCI runtime spec (process.user, root.readonly, process.capabilities, linux.namespaces, …). */
  spec: OciSpec;
  /** Its task's init pid on this machine, when running. */
  pid?: number;
  status?: string;
}

export interface OciSpec {
  process?: {
    user?: { uid?: number; gid?: number };
    capabilities?: Record<string, string[] | undefined>;
    noNewPrivileges?: boolean;
  };
  root?: { path?: string; readonly?: boolean };
  mounts?: Array<{ destination: string; type?: string; source?: string; options?: string[] }>;
  linux?: { cgroupsPath?: string; namespaces?: Array<{ type: string; path?: string }> };
}

export async function listContainers(socket: string): Promise<NodeContainer[]> {
  const ids = (await ctr(socket, ['containers', 'ls', '-q'])).split('\n').filter(Boolean);
  const tasks = new Map<string, { pid: number; status: string }>();
  for (const line of (await ctr(socket, ['tasks', 'ls'])).split('\n').slice(1)) {
    const [id, pid, status] = line.trim().split(/\s+/);
    if (id && pid) tasks.set(id, { pid: Number(pid), status: status ?? '' });
  }
  const out: NodeContainer[] = [];
  for (const id of ids) {
    let info: { Labels?: Record<string, string>; Spec?: OciSpec };
    try {
      info = JSON.parse(await ctr(socket, ['containers', 'info', id])) as typeof info;
    } catch {
      continue; // removed meanwhile
    }
    const task = tasks.get(id);
    out.push({
      id,
      labels: info.Labels ?? {},
      spec: info.Spec ?? {},
      ...(task ? { pid: task.pid, status: task.status } : {}),
    });
  }
  return out;
}

/**
 * Kills and deletes every task and container of the node's containerd; returns the network namespace files
 * their sandboxes were given (bind mounts in /run/netns, which outlive containerd), for the caller to remove.
 */
export async function removeAllContainers(socket: string): Promise<string[]> {
  const containers = await listContainers(socket);
  const netns = new Set<string>();
  for (const c of containers) {
    for (const ns of c.spec.linux?.namespaces ?? []) if (ns.type === 'network' && ns.path) netns.add(ns.path);
  }
  await Promise.all(
    containers.map(async (c) => {
      await ctr(socket, ['tasks', 'kill', '--signal', 'SIGKILL', c.id], 10_000).catch(() => undefined);
      await ctr(socket, ['tasks', 'delete', '--force', c.id], 20_000).catch(() => undefined);
      await ctr(socket, ['containers', 'delete', c.id], 20_000).catch(() => undefined);
    }),
  );
  return [...netns];
}
