/**
 * What the local stack keeps in its state directory, and where. With `persist` (the etcd store) a
 * restarted stack resumes from it, a kill -9 included:
 *
 *   <dir>/etcd/<cluster-id>/  each cluster's etcd data dir (its Kubernetes objects)
 *   <dir>/table/              dynalite's LevelDB: the state table (registrations, pools, leases, rollouts)
 *   <dir>/pki/                the clusters' CA (ca.crt, ca.key mode 0600)
 *   <dir>/kubeconfigs/        one kubeconfig per cluster (unless another directory is named)
 *   <dir>/dlq.jsonl           the bus's dead letters (always kept, also without persist)
 *   <dir>/env                 exports for spiritctl in another shell
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const DEFAULT_FLEET_STATE_DIR = '.local';
/** The cluster ids the fleet hands out (cluster-01, cluster-02, …): anything else under etcd/ is not ours. */
const CLUSTER_ID = /^cluster-\d{2,}$/;

export interface FleetStateDir {
  dir: string;
  /** Clusters, table and CA are kept here and resumed; false: they live in memory (and /dev/shm) only. */
  persistent: boolean;
  kubeconfigDir: string;
  tableDir: string;
  pkiDir: string;
  /** The etcd data dir of a cluster when persistent; undefined: a fresh one in /dev/shm, removed on stop. */
  etcdDataDir(clusterId: string): string | undefined;
  envFile: string;
}

export function fleetStateDir(opts: { stateDir?: string; kubeconfigDir?: string; persist?: boolean }): FleetStateDir {
  const dir = resolve(opts.stateDir ?? DEFAULT_FLEET_STATE_DIR);
  const persistent = opts.persist ?? false;
  return {
    dir,
    persistent,
    kubeconfigDir: resolve(opts.kubeconfigDir ?? join(dir, 'kubeconfigs')),
    tableDir: join(dir, 'table'),
    pkiDir: join(dir, 'pki'),
    etcdDataDir: (id) => (persistent ? join(dir, 'etcd', id) : undefined),
    envFile: join(dir, 'env'),
  };
}

/** Creates the directories the stack writes to, so a fresh or separately named one just works. */
export async function prepareStateDir(state: FleetStateDir): Promise<void> {
  await mkdir(state.dir, { recursive: true });
  await mkdir(state.kubeconfigDir, { recursive: true });
}

/** Ids of the clusters a previous run kept (their etcd data dirs), in order. */
export async function persistedClusterIds(state: FleetStateDir): Promise<string[]> {
  if (!state.persistent) return [];
  try {
    return (await readdir(join(state.dir, 'etcd'))).filter((n) => CLUSTER_ID.test(n)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Endpoints and paths spiritctl in another shell needs to reach this stack. */
export interface StackEnv {
  dynamoEndpoint: string;
  busEndpoint: string;
  eventBusName: string;
}

/** Single-quoted for a POSIX shell: the state dir may hold spaces or quotes. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Writes `<dir>/env`; returns the variables it exports (name → value). */
export async function writeStackEnv(state: FleetStateDir, env: StackEnv): Promise<Record<string, string>> {
  const vars: Record<string, string> = {
    SPIRITCTL_DYNAMO_ENDPOINT: env.dynamoEndpoint,
    SPIRITCTL_BUS_ENDPOINT: env.busEndpoint,
    EVENT_BUS_NAME: env.eventBusName,
    // `events dlq` and `local nodes add` read the state dir and the kubeconfigs from these.
    SPIRITCTL_STATE_DIR: state.dir,
    SPIRITCTL_KUBECONFIG_DIR: state.kubeconfigDir,
  };
  await writeFile(state.envFile, Object.entries(vars).map(([k, v]) => `export ${k}=${shellQuote(v)}`).join('\n') + '\n');
  return vars;
}
