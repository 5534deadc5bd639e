/**
 * The file system pieces the images are assembled from, as spec entries for tools/images: a distroless-like
 * base (users, groups, /tmp, no shell), the files of pinned Debian packages, single files.
 */
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One file system object of a layer, as tools/images/spec.go reads it. */
export interface Entry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  src?: string;
  data?: string;
  target?: string;
  mode: number;
  uid: number;
  gid: number;
}
export interface LayerSpec {
  createdBy: string;
  entries: Entry[];
}

/** The uid and gid every runtime image runs as (distroless `nonroot`; core/render/layout.ts RUN_AS_USER). */
export const NONROOT = 65532;

/** What distroless's base holds that a process can notice: who uid 0/65532/65534 are, name lookup, /tmp. */
export function baseLayer(): LayerSpec {
  const text = (path: string, data: string): Entry => ({ path, type: 'file', data, mode: 0o644, uid: 0, gid: 0 });
  return {
    createdBy: 'base: passwd, group, nsswitch.conf, /tmp, /home/nonroot (no shell)',
    entries: [
      text(
        'etc/passwd',
        'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' +
          `nonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`,
      ),
      text('etc/group', `root:x:0:\nnobody:x:65534:\nnonroot:x:${NONROOT}:\n`),
      text('etc/nsswitch.conf', 'passwd: files\ngroup: files\nhosts: files dns\n'),
      { path: 'tmp', type: 'dir', mode: 0o1777, uid: 0, gid: 0 },
      { path: 'root', type: 'dir', mode: 0o700, uid: 0, gid: 0 },
      { path: 'home/nonroot', type: 'dir', mode: 0o700, uid: NONROOT, gid: NONROOT },
    ],
  };
}

/** A file copied in, owned by root, read-only (or executable) for everyone else. */
export function file(path: string, src: string, executable = false): Entry {
  return { path, type: 'file', src, mode: executable ? 0o755 : 0o644, uid: 0, gid: 0 };
}

/** Every file under `dir`, placed under `at` in the image, owned by root. */
export function tree(dir: string, at: string, keep: (rel: string) => boolean = () => true): Entry[] {
  const entries: Entry[] = [];
  const walk = (abs: string): void => {
    for (const name of readdirSync(abs).sort()) {
      const p = join(abs, name);
      const rel = relative(dir, p);
      const st = lstatSync(p);
      const path = at ? `${at}/${rel}` : rel;
      if (st.isDirectory()) {
        walk(p);
        continue;
      }
      if (!keep(rel)) continue;
      if (st.isSymbolicLink())
        entries.push({ path, type: 'symlink', target: readlinkSync(p), mode: 0o777, uid: 0, gid: 0 });
      else if (st.isFile()) entries.push({ path, type: 'file', src: p, mode: st.mode & 0o7777, uid: 0, gid: 0 });
    }
  };
  walk(dir);
  return entries;
}

/**
 * The run-time part of a Debian library package: its shared objects and its copyright, not the gconv modules
 * (Node converts text with its own ICU), lintian overrides, debugger scripts or documentation.
 */
export function debRuntimeFiles(rel: string, pkg: string): boolean {
  if (rel === `usr/share/doc/${pkg}/copyright`) return true;
  if (!/^(lib|lib64|usr\/lib)\//.test(rel)) return false;
  return !/\/gconv\//.test(rel);
}
