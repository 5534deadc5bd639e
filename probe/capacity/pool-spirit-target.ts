/**
 * The `--local` target's contract: a real pool-spirit. The PoolSpirit is rendered exactly as the reconciler renders it
 * (default bundle, fresh PKI), and its etcd and kube-apiserver containers run as the built binaries with
 * the rendered args (dev/local/kubelet/process/real-control-plane.ts translates only paths and ports): TLS
 * everywhere, etcd's data dir in /dev/shm as the `medium: Memory` emptyDir keeps it.
 *
 * A profile changes only flags of the rendered containers, so product and upstream differ in exactly the
 * flags the report lists. The probe talks to the apiserver as the rendered agent identity
 * (system:masters) and to etcd with the agent's client certificate, the way the agent does.
 */
import type { EtcdAccess } from '../../agent/adapters/etcd.ts';
import type { PodCgroupSource } from './cgroup.ts';
import type { EtcdSettings } from './etcd-settings.ts';
import type { KubeHttp, KubeHttpOptions } from './kube-http.ts';
/**
 * kube-apiserver flags the product renders to cut memory (core/render/containers.ts); the upstream profile
 * runs without them, as a kube-apiserver with upstream defaults.
 */
export const APISERVER_MEMORY_FLAGS = ['runtime-config', 'disable-admission-plugins', 'watch-cache-sizes'] as const;

export type ApiServerProfile = 'product' | 'upstream';

export interface PoolSpiritTargetOptions {
  etcd: EtcdSettings;
  apiServer: ApiServerProfile;
  /** kube-apiserver flags (without `--`) laid over the profile's: to measure a candidate before rendering it. */
  apiServerFlags?: Record<string, string>;
  /** Environment variables added to containers, by container name (e.g. GOMEMLIMIT for kube-apiserver). */
  containerEnv?: Record<string, Record<string, string>>;
  log?: (line: string) => void;
  http?: KubeHttpOptions;
}

export interface PoolSpiritTarget {
  api: KubeHttp;
  etcd: { pid: number; dataDir: string; access: EtcdAccess };
  apiServerPid: number;
  /** The args each container ran with, as rendered (before path and port translation). */
  args: { etcd: string[]; apiServer: string[] };
  /** A pod under a kubelet on this machine: its cgroups, which the probe reads beside each process. */
  pod?: PodCgroupSource;
  /** Where the pool-spirit runs: as processes (no kubelet, no cgroup limits), or as a pod on a real node. */
  runsOn?: { kind: 'processes' } | { kind: 'real-node'; node: string; pod: string };
  stop(): Promise<void>;
}

/**
 * Starts the rendered pool-spirit on the built binaries. The probe is handed one (the CLI passes
 * dev/local/capacity/pool-spirit-target.ts's) instead of importing the local stack: what ships stays apart from
 * the harness.
 */
export type StartPoolSpiritTarget = (options: PoolSpiritTargetOptions) => Promise<PoolSpiritTarget>;

/** What withProfile reads and writes of a pod: its containers' names and args. */
export interface ProfiledContainer {
  name: string;
  args?: string[];
}

/**
 * The pod with etcd's flags set to `etcdFlags`, for upstream the apiserver's memory flags removed, and
 * `apiServerFlags` laid over the apiserver's.
 */
export function withProfile<C extends ProfiledContainer, P extends { containers: C[] }>(
  pod: P,
  etcdFlags: Record<string, string>,
  apiServer: ApiServerProfile,
  apiServerFlags: Record<string, string> = {},
): P {
  const containers = pod.containers.map((c): C => {
    if (c.name === 'etcd') return { ...c, args: setFlags(c.args ?? [], etcdFlags) };
    if (c.name !== 'kube-apiserver') return c;
    const args = apiServer === 'upstream' ? dropFlags(c.args ?? [], APISERVER_MEMORY_FLAGS) : (c.args ?? []);
    return { ...c, args: setFlags(args, apiServerFlags) };
  });
  return { ...pod, containers };
}

/** Replaces each flag's value where the args have it and appends the others. */
export function setFlags(args: readonly string[], flags: Record<string, string>): string[] {
  const rest = new Map(Object.entries(flags));
  const out = args.map((arg) => {
    const name = flagName(arg);
    const value = name === undefined ? undefined : rest.get(name);
    if (name === undefined || value === undefined) return arg;
    rest.delete(name);
    return `--${name}=${value}`;
  });
  for (const [name, value] of rest) out.push(`--${name}=${value}`);
  return out;
}

export function dropFlags(args: readonly string[], names: readonly string[]): string[] {
  return args.filter((arg) => !names.includes(flagName(arg) ?? ''));
}

function flagName(arg: string): string | undefined {
  return /^--([a-z0-9-]+)=/.exec(arg)?.[1];
}
