/**
 * What a real node leaves on this machine beyond its processes, and how it is taken back: the kubelet's and
 * containerd's mounts (volumes, rootfs overlays, shm, the sandboxes' network namespace files), the cgroups
 * under the node's cgroup root, and containerd's shims (they leave containerd's process group on purpose, so
 * a containerd restart keeps containers running). Synchronous, so the exit hook can run it too.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_FS = '/sys/fs/cgroup';

/** Mount points at or below one of `prefixes`, deepest first (mountinfo field 5, octal escapes decoded). */
export function mountsUnder(prefixes: readonly string[]): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  return [...new Set(points.filter((p) => prefixes.some((pre) => p === pre || p.startsWith(`${pre}/`))))].sort(
    (a, b) => b.length - a.length,
  );
}

/** Lazily unmounts everything at or below the prefixes; returns how many mounts were taken down. */
export function unmountUnder(prefixes: readonly string[]): number {
  let count = 0;
  // A mount can be stacked on another at the same point: repeat until none is left (bounded).
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(prefixes);
    if (points.length === 0) break;
    for (const p of points) {
      try {
        execFileSync('/usr/bin/umount', ['--lazy', p], { stdio: 'ignore' });
        count++;
      } catch {
        // gone already, or busy: the next round sees
      }
    }
  }
  return count;
}

/** The cgroup v1 hierarchies (and the unified one) this machine mounts. */
export function cgroupHierarchies(): string[] {
  try {
    return readdirSync(CGROUP_FS)
      .map((name) => join(CGROUP_FS, name))
      .filter((dir) => {
        try {
          return statSync(join(dir, 'cgroup.procs')).isFile();
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** Removes a cgroup subtree in every hierarchy, children first; processes still in it are killed first. */
export function removeCgroupTree(relative: string): void {
  for (const hierarchy of cgroupHierarchies()) {
    const root = join(hierarchy, relative);
    for (const dir of subtreeDeepestFirst(root)) {
      for (const pid of readPids(join(dir, 'cgroup.procs'))) killQuietly(pid);
      try {
        rmdirSync(dir);
      } catch {
        // busy for a moment after its last process died, or gone
      }
    }
  }
}

function subtreeDeepestFirst(dir: string): string[] {
  let children: string[] = [];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name));
  } catch {
    return [];
  }
  return [...children.flatMap(subtreeDeepestFirst), dir];
}

function readPids(file: string): number[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Processes whose command line mentions `needle` (containerd's shims name their containerd's socket). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Removes a file that may be a mount point (a sandbox's network namespace in /run/netns). */
export function removeNamespaceFile(path: string): void {
  try {
    execFileSync('/usr/bin/umount', ['--lazy', path], { stdio: 'ignore' });
  } catch {
    // not mounted
  }
  rmSync(path, { force: true });
}
