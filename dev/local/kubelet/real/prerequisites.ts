/**
 * What a real node needs on this machine, checked before anything starts: root (namespaces, mounts, cgroups),
 * Debian's containerd, runc and CNI plugins (`scripts/ensure-env.sh --tests` installs them), util-linux and
 * iproute2 (the node's network namespace), and the kubelet built from the pinned module (`npm run kube-bins`).
 * `realNodeSkipReason()` says in one sentence why a node cannot run here, for tests to skip with.
 */
import { accessSync, constants } from 'node:fs';
import { kubeBinaryPath, requireKubeBinary } from '../../kube-bins/index.ts';
import { CNI_BIN_DIR, RUNC } from './config.ts';
import { CTR } from './ctr.ts';

const DEBIAN = {
  containerd: '/usr/bin/containerd',
  'containerd-shim-runc-v2': '/usr/bin/containerd-shim-runc-v2',
  ctr: CTR,
  runc: RUNC,
  'CNI bridge plugin': `${CNI_BIN_DIR}/bridge`,
  'CNI host-local plugin': `${CNI_BIN_DIR}/host-local`,
  'CNI loopback plugin': `${CNI_BIN_DIR}/loopback`,
} as const;

const INSTALL = 'apt-get install -y containerd runc containernetworking-plugins (scripts/ensure-env.sh --tests does)';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function firstExecutable(paths: readonly string[]): string | undefined {
  return paths.find(executable);
}

/** Why a real node cannot start on this machine, or undefined when it can. */
export function realNodeSkipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'a real node needs root (network namespaces, mounts, cgroups)';
  for (const [what, path] of Object.entries(DEBIAN))
    if (!executable(path)) return `${what} missing at ${path}: ${INSTALL}`;
  if (!firstExecutable(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip'])) return 'ip missing: apt-get install iproute2';
  if (!executable('/usr/bin/nsenter')) return 'nsenter missing: apt-get install util-linux';
  if (!executable(kubeBinaryPath('kubelet')))
    return `kubelet not built at ${kubeBinaryPath('kubelet')}: run npm run kube-bins`;
  return undefined;
}

export function requireRealNodePrerequisites(): { containerd: string; kubelet: string; ip: string; nsenter: string } {
  const reason = realNodeSkipReason();
  if (reason) throw new Error(`cannot start a real node: ${reason}`);
  return {
    containerd: DEBIAN.containerd,
    kubelet: requireKubeBinary('kubelet'),
    ip: firstExecutable(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip'])!,
    nsenter: '/usr/bin/nsenter',
  };
}
