/**
 * Where the pinned Kubernetes binaries live. `npm run kube-bins` (scripts/kube-bins.sh) builds them from the
 * Go modules under tools/ into a git-ignored cache; `npm test` builds them first. An environment variable of
 * the binary's name in capitals (KUBECTL, …) points at another build instead.
 *
 * Nothing here falls back to a binary found on PATH: a test judged by whatever kubectl a machine happens to
 * have would judge against an unknown version.
 */
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KUBE_BINS_DIR = fileURLToPath(new URL('../../.cache/kube-bins/bin/', import.meta.url));

export type KubeBinary = 'kubectl' | 'pointer-fields' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'etcd' | 'etcdctl';

/** KUBECTL, POINTER_FIELDS, … */
function envName(name: KubeBinary): string {
  return name.toUpperCase().replaceAll('-', '_');
}

export function kubeBinaryPath(name: KubeBinary): string {
  return process.env[envName(name)] ?? join(KUBE_BINS_DIR, name);
}

/** The path of a built binary, or an error that says how to get it. */
export function requireKubeBinary(name: KubeBinary): string {
  const path = kubeBinaryPath(name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `${name} not found at ${path}. It is built from the pinned Go module under tools/: run \`npm run kube-bins\` ` +
        `(needs Go ≥ 1.26 and the Go module proxy), or set ${envName(name)} to an existing binary.`,
    );
  }
  return path;
}

export const KUBECTL = kubeBinaryPath('kubectl');
