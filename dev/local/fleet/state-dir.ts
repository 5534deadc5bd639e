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
 *   <dir>/local-up.pid        the process using the kept state (two would corrupt LevelDB and etcd)
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isAlive } from '../etcd/launch.ts';

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

const SEEDED_MARKER = 'seeded';

/**
 * The clusters a previous run kept (their etcd data dirs), and which of them it finished seeding. One
 * without the marker was stopped while being seeded: it is seeded again (seeding creates only what is
 * missing).
 */
export async function keptClusters(state: FleetStateDir): Promise<{ ids: string[]; seeded: Set<string> }> {
  if (!state.persistent) return { ids: [], seeded: new Set() };
  let ids: string[];
  try {
    ids = (await readdir(join(state.dir, 'etcd'))).filter((n) => CLUSTER_ID.test(n)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ids: [], seeded: new Set() };
    throw err;
  }
  const marked = await Promise.all(
    ids.map((n) =>
      stat(join(state.dir, 'etcd', n, SEEDED_MARKER)).then(
        () => true,
        () => false,
      ),
    ),
  );
  return { ids, seeded: new Set(ids.filter((_, i) => marked[i])) };
}

/** Records that a kept cluster is fully seeded (see keptClusters). */
export async function markSeeded(state: FleetStateDir, clusterId: string): Promise<void> {
  const dataDir = state.etcdDataDir(clusterId);
  if (dataDir) await writeFile(join(dataDir, SEEDED_MARKER), `${new Date().toISOString()}\n`);
}

/**
 * Claims kept state for this process: a second stack on the same directory would open the same LevelDB
 * and etcd data dirs. A pid file left by a killed run names a dead process and is taken over. Returns
 * the release function (nothing to claim without persistence).
 */
export async function claimStateDir(state: FleetStateDir): Promise<() => Promise<void>> {
  if (!state.persistent) return async () => undefined;
  const pidFile = join(state.dir, 'local-up.pid');
  const holder = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
    throw new Error(
      `state dir ${state.dir} is in use by another local up (pid ${holder}); stop it first or use another --state-dir`,
    );
  }
  await writeFile(pidFile, `${process.pid}\n`);
  return () => rm(pidFile, { force: true });
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
  await writeFile(
    state.envFile,
    `${Object.entries(vars)
      .map(([k, v]) => `export ${k}=${shellQuote(v)}`)
      .join('\n')}\n`,
  );
  return vars;
}
