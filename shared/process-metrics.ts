/**
 * Memory figures of a process and a directory, read from Linux /proc and the file system: "memory" of an
 * etcd whose data dir is in tmpfs is processRssBytes(pid) + dirBytes(dataDir), since a `medium: Memory`
 * emptyDir is charged to the pod's memory limit. Shared by the capacity probe and the local stack.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Resident memory of a process (VmRSS), from /proc. */
export async function processRssBytes(pid: number): Promise<number> {
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new TypeError(`pid must be a positive integer; got ${pid}`);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`/proc/${pid}/status has no VmRSS line (is ${pid} a zombie?)`);
  return Number(match[1]) * 1024;
}

/**
 * Bytes allocated under a directory, like `du -s -B1`: allocated blocks, not apparent sizes, because etcd
 * preallocates WAL segments and tmpfs charges what is allocated.
 */
export async function dirBytes(path: string): Promise<number> {
  const st = await lstat(path);
  let total = st.blocks * 512;
  if (!st.isDirectory()) return total;
  for (const entry of await readdir(path)) {
    try {
      total += await dirBytes(join(path, entry));
    } catch (err) {
      // etcd deletes old WAL and snapshot files while we walk; a vanished file holds nothing.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return total;
}
