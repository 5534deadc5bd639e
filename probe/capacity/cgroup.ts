/**
 * A pod's memory and CPU as its cgroups account them: what a memory limit is enforced against, tmpfs included
 * (a `medium: Memory` emptyDir's pages are charged to the container that writes them). Read from the cgroup
 * file system of the node the probe runs on, v1 (this project's CI machines are hybrid) or v2 (most
 * production nodes). Parsing is pure and apart from the reads, so both layouts are tested from their text.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export type CgroupVersion = 1 | 2;

/** One memory cgroup (a pod's or a container's), bytes. */
export interface CgroupMemory {
  /** Everything charged: anonymous memory, page cache and tmpfs (v1 memory.usage_in_bytes, v2 memory.current). */
  usageBytes: number;
  /**
   * usage − inactive file cache: what the kubelet calls the working set, and what cannot be reclaimed before
   * the limit is enforced. tmpfs pages are swap-backed, never on the file lists, so they stay in it.
   */
  workingSetBytes: number;
  /** Anonymous memory (v1 total_rss, v2 anon). */
  anonBytes: number;
  /** tmpfs and shared memory (v1 total_shmem, v2 shmem). */
  shmemBytes: number;
  /** The highest usage the kernel recorded since the cgroup was made (v1 max_usage_in_bytes, v2 memory.peak); null where the kernel keeps none. */
  peakUsageBytes: number | null;
  /** null: no limit. */
  limitBytes: number | null;
  /** Processes the kernel's OOM killer ended in this cgroup and below it. */
  oomKills: number;
}

export interface PodCgroupSnapshot extends CgroupMemory {
  /** CPU time the pod's processes used since it started, seconds. */
  cpuSeconds: number | null;
  /** Each running container's own cgroup, by container name, with the CPU seconds it used since it started. */
  containers: Record<string, ContainerCgroup>;
}

export interface ContainerCgroup extends CgroupMemory {
  cpuSeconds: number | null;
}

/** Where a pod's cgroups are, and how to find its containers' (their processes change on a restart). */
export interface PodCgroupSource {
  version: CgroupVersion;
  /** The cgroup file system's root: /sys/fs/cgroup. */
  root: string;
  /** The pod cgroup's path below each hierarchy, as /proc/<pid>/cgroup names it, e.g. /kubepods/burstable/pod<uid>. */
  podPath: string;
  /** The main process of each running container, by name. */
  containerPids(): Promise<Record<string, number>>;
}

const UNLIMITED_V1 = 2 ** 62;

/** `key value` lines (memory.stat, cpu.stat, memory.events, memory.oom_control). */
export function parseFlatKeyed(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) out.set(key, Number(value));
  }
  return out;
}

/** The files of one v1 memory cgroup, as read. */
export interface V1MemoryFiles {
  usage: string;
  maxUsage: string;
  limit: string;
  stat: string;
  oomControl: string;
}

export function memoryFromV1(f: V1MemoryFiles): CgroupMemory {
  const stat = parseFlatKeyed(f.stat);
  const usageBytes = Number(f.usage.trim());
  const limit = Number(f.limit.trim());
  // total_*: this cgroup and its children (a pod's containers).
  const inactiveFile = stat.get('total_inactive_file') ?? stat.get('inactive_file') ?? 0;
  return {
    usageBytes,
    workingSetBytes: Math.max(0, usageBytes - inactiveFile),
    anonBytes: stat.get('total_rss') ?? stat.get('rss') ?? 0,
    shmemBytes: stat.get('total_shmem') ?? stat.get('shmem') ?? 0,
    peakUsageBytes: Number(f.maxUsage.trim()),
    limitBytes: limit >= UNLIMITED_V1 ? null : limit,
    // Counted into every ancestor of the cgroup where the kill happened (kernel 4.19+), so a pod's includes
    // its containers' kills, even of containers since restarted in a new cgroup.
    oomKills: parseFlatKeyed(f.oomControl).get('oom_kill') ?? 0,
  };
}

export interface V2MemoryFiles {
  current: string;
  /** null: a kernel before 5.19 keeps no peak. */
  peak: string | null;
  max: string;
  stat: string;
  events: string;
}

export function memoryFromV2(f: V2MemoryFiles): CgroupMemory {
  const stat = parseFlatKeyed(f.stat);
  const usageBytes = Number(f.current.trim());
  const max = f.max.trim();
  return {
    usageBytes,
    workingSetBytes: Math.max(0, usageBytes - (stat.get('inactive_file') ?? 0)),
    anonBytes: stat.get('anon') ?? 0,
    shmemBytes: stat.get('shmem') ?? 0,
    peakUsageBytes: f.peak === null ? null : Number(f.peak.trim()),
    limitBytes: max === 'max' ? null : Number(max),
    // memory.events is hierarchical unless the memory_localevents mount option is set.
    oomKills: parseFlatKeyed(f.events).get('oom_kill') ?? 0,
  };
}

/** The cgroup path of a process for one v1 controller, or its v2 path (`0::/path`). */
export function cgroupPathOf(procCgroup: string, version: CgroupVersion, controller: string): string | undefined {
  for (const line of procCgroup.split('\n')) {
    const [id, controllers, path] = line.split(':');
    if (path === undefined) continue;
    if (version === 2 ? id === '0' && controllers === '' : controllers?.split(',').includes(controller)) return path;
  }
  return undefined;
}

export async function readCgroupMemory(root: string, version: CgroupVersion, path: string): Promise<CgroupMemory> {
  if (version === 1) {
    const dir = join(root, 'memory', path);
    const read = (f: string) => readFile(join(dir, f), 'utf8');
    const [usage, maxUsage, limit, stat, oomControl] = await Promise.all([
      read('memory.usage_in_bytes'),
      read('memory.max_usage_in_bytes'),
      read('memory.limit_in_bytes'),
      read('memory.stat'),
      read('memory.oom_control'),
    ]);
    return memoryFromV1({ usage, maxUsage, limit, stat, oomControl });
  }
  const dir = join(root, path);
  const read = (f: string) => readFile(join(dir, f), 'utf8');
  const [current, peak, max, stat, events] = await Promise.all([
    read('memory.current'),
    read('memory.peak').catch(() => null),
    read('memory.max'),
    read('memory.stat'),
    read('memory.events'),
  ]);
  return memoryFromV2({ current, peak, max, stat, events });
}

/** CPU seconds a cgroup used: v1 cpuacct.usage (ns), v2 cpu.stat usage_usec. */
export async function readCgroupCpuSeconds(root: string, version: CgroupVersion, path: string): Promise<number> {
  if (version === 1) return Number((await readFile(join(root, 'cpuacct', path, 'cpuacct.usage'), 'utf8')).trim()) / 1e9;
  const usec = parseFlatKeyed(await readFile(join(root, path, 'cpu.stat'), 'utf8')).get('usage_usec');
  if (usec === undefined) throw new Error(`${join(root, path, 'cpu.stat')} has no usage_usec`);
  return usec / 1e6;
}

/**
 * The v1 pod path of a container's process: the pod cgroup is its memory cgroup's parent. The cpuacct path
 * can differ where cpu and cpuacct are mounted apart, so each controller is read from /proc/<pid>/cgroup.
 */
export async function podCgroupSnapshot(source: PodCgroupSource): Promise<PodCgroupSnapshot> {
  const pids = await source.containerPids();
  const containers: Record<string, ContainerCgroup> = {};
  let cpuPath: string | undefined;
  for (const [name, pid] of Object.entries(pids)) {
    const own = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => undefined);
    if (own === undefined) continue; // restarted between the listing and this read
    const memoryPath = cgroupPathOf(own, source.version, 'memory');
    const cpu = cgroupPathOf(own, source.version, 'cpuacct');
    if (cpu) cpuPath ??= parentOf(cpu);
    if (memoryPath)
      containers[name] = {
        ...(await readCgroupMemory(source.root, source.version, memoryPath)),
        cpuSeconds: cpu ? await readCgroupCpuSeconds(source.root, source.version, cpu).catch(() => null) : null,
      };
  }
  const pod = await readCgroupMemory(source.root, source.version, source.podPath);
  const cpuSeconds = await readCgroupCpuSeconds(source.root, source.version, cpuPath ?? source.podPath).catch(
    () => null,
  );
  return { ...pod, cpuSeconds, containers };
}

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/')) || '/';
}
