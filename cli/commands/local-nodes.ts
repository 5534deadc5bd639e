/** `spiritctl local nodes add`: Ready edge nodes for a NodePool of a running local stack's cluster. */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RealNode } from '../../dev/local/kubelet/real/real-node.ts';
import { type Command, choiceFlag, intFlag, UsageError } from '../command.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** The kubeconfig directory `local up` used: the flag, else what `source <state-dir>/env` exported. */
function kubeconfigDir(values: Record<string, unknown>): string {
  if (values['kubeconfig-dir'] !== undefined) return String(values['kubeconfig-dir']);
  if (values['state-dir'] !== undefined) return join(String(values['state-dir']), 'kubeconfigs');
  return process.env.SPIRITCTL_KUBECONFIG_DIR || join(process.env.SPIRITCTL_STATE_DIR || '.local', 'kubeconfigs');
}

function knownClusters(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.kubeconfig'))
      .map((f) => f.slice(0, -'.kubeconfig'.length))
      .sort();
  } catch {
    return [];
  }
}

export const localNodesAddCommand: Command = {
  path: ['local', 'nodes', 'add'],
  summary: "add Ready edge nodes to a NodePool of the running local stack's cluster",
  options: {
    cluster: { type: 'string', valueName: 'ID', description: 'local cluster id, e.g. cluster-01' },
    pool: { type: 'string', valueName: 'NAME', description: 'the NodePool the nodes join (it must exist)' },
    count: { type: 'string', valueName: 'N', default: '1', description: 'nodes to add (1-100)' },
    kubelet: {
      type: 'string',
      valueName: 'sim|real',
      default: 'sim',
      description:
        'sim: Node objects the local kubelet plays; real: real nodes (kubelet + containerd) run by this command until Ctrl-C, for a `local up --kubelet real` stack (root)',
    },
    'state-dir': {
      type: 'string',
      valueName: 'DIR',
      description: "the local stack's state directory (env SPIRITCTL_STATE_DIR, else .local)",
    },
    'kubeconfig-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        "the local stack's kubeconfig directory (env SPIRITCTL_KUBECONFIG_DIR, else <state-dir>/kubeconfigs)",
    },
  },
  details: `
Talks to the cluster through the kubeconfig \`spiritctl local up\` wrote for it. Each node is labelled
apps.openyurt.io/nodepool=<pool> and reports Ready, as the seeded nodes do, so the local kubelet places the
pool's pool-spirit on it and the pool becomes Available. Names continue after the pool's nodes
(<pool>-node-0, -1, …).

Example (after \`source .local/env\`):
  kubectl --kubeconfig .local/kubeconfigs/cluster-01.kubeconfig apply -f shop-17.yaml
  spiritctl local nodes add --cluster cluster-01 --pool shop-17 --count 2`,
  async run({ values }) {
    if (values.cluster === undefined)
      throw new UsageError('--cluster is required (a local cluster id, e.g. cluster-01)');
    if (values.pool === undefined) throw new UsageError('--pool is required (the NodePool the nodes join)');
    const cluster = String(values.cluster);
    const pool = String(values.pool);
    if (!DNS_LABEL.test(cluster))
      throw new UsageError(`--cluster must be a local cluster id such as cluster-01, got "${cluster}"`);
    // A node name is <pool>-node-<n>: the pool name must leave room for it in a DNS subdomain.
    if (!DNS_SUBDOMAIN.test(pool) || pool.length > 240)
      throw new UsageError(
        `--pool must be a NodePool name (lowercase letters, digits, '-', '.'; at most 240 characters), got "${pool}"`,
      );
    const count = intFlag('count', values.count, 1, 100);
    const kubelet = choiceFlag('kubelet', values.kubelet, ['sim', 'real'] as const);

    const dir = kubeconfigDir(values);
    const kubeconfigPath = join(dir, `${cluster}.kubeconfig`);
    if (!existsSync(kubeconfigPath)) {
      const known = knownClusters(dir);
      throw new UsageError(
        `--cluster ${cluster}: no kubeconfig at ${kubeconfigPath}; ` +
          (known.length
            ? `the local stack's clusters are ${known.join(', ')}`
            : 'is `spiritctl local up` running with this state dir (source <state-dir>/env, or --state-dir)?'),
      );
    }
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { addPoolNodes, NoSuchPoolError } = await import('../../dev/local/fleet/add-nodes.ts');
    if (kubelet === 'real') return runRealNodes(cluster, kubeconfigPath, values, pool, count);
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    let created: string[];
    try {
      created = await addPoolNodes(kc, pool, count);
    } catch (err) {
      if (err instanceof NoSuchPoolError)
        throw new UsageError(`--pool ${pool}: ${err.message} in ${cluster}; create it first (kubectl apply)`);
      const e = err as Error & { code?: unknown; cause?: { code?: string } };
      if (typeof e.code !== 'number') {
        throw new Error(
          `cannot reach ${cluster} at ${kc.getCurrentCluster()?.server} (${e.cause?.code ?? e.message}): is \`spiritctl local up\` running?`,
        );
      }
      throw err;
    }
    process.stdout.write(
      `added ${created.length} Ready node(s) to NodePool ${pool} in ${cluster}: ${created.join(', ')}\n`,
    );
    return 0;
  },
};

/** `--kubelet real`: starts the nodes here and keeps them until SIGINT/SIGTERM (or one of them fails). */
async function runRealNodes(
  cluster: string,
  kubeconfigPath: string,
  values: Record<string, unknown>,
  pool: string,
  count: number,
): Promise<number> {
  const { addRealPoolNodes } = await import('../../dev/local/kubelet/real/add-real-nodes.ts');
  const { NoSuchPoolError } = await import('../../dev/local/fleet/add-nodes.ts');
  const stateDir = String(values['state-dir'] ?? (process.env.SPIRITCTL_STATE_DIR || '.local'));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  let nodes: RealNode[];
  try {
    nodes = await addRealPoolNodes({
      clusterId: cluster,
      kubeconfigPath,
      pkiDir: join(stateDir, 'pki'),
      pool,
      count,
      log: say,
    });
  } catch (err) {
    if (err instanceof NoSuchPoolError)
      throw new UsageError(`--pool ${pool}: ${err.message} in ${cluster}; create it first (kubectl apply)`);
    throw err;
  }
  say(
    `added ${nodes.length} real node(s) to NodePool ${pool} in ${cluster}: ${nodes.map((n) => n.name).join(', ')}; Ctrl-C stops them`,
  );
  const why = await Promise.race([
    new Promise<string>((resolve) => process.once('SIGINT', () => resolve('SIGINT'))),
    new Promise<string>((resolve) => process.once('SIGTERM', () => resolve('SIGTERM'))),
    ...nodes.map((n) => n.exited.then((e) => `${n.name} ${e.name} exited: ${e.lastLines}`)),
  ]);
  say(`stopping the nodes (${why})`);
  await Promise.all(nodes.map((n) => n.stop()));
  return why.startsWith('SIG') ? 0 : 1;
}
