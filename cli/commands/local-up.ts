import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { FleetProgress } from '../../dev/local/fleet/progress.ts';
import { OPENYURT_RELEASES } from '../../dev/local/kube-bins/index.ts';
import { type Command, choiceFlag, intFlag, UsageError } from '../command.ts';

export const localUp: Command = {
  path: ['local', 'up'],
  summary: 'run the whole system locally: clusters, forwarders, bus, functions, state table',
  options: {
    clusters: { type: 'string', default: '2', valueName: 'N', description: 'local clusters to start (1-50)' },
    pools: { type: 'string', default: '3', valueName: 'M', description: 'edge NodePools per cluster (0-500)' },
    'nodes-per-pool': {
      type: 'string',
      default: '2',
      valueName: 'K',
      description: 'Ready edge nodes per pool (0-100)',
    },
    'cloud-pools': {
      type: 'string',
      default: '1',
      valueName: 'N',
      description: 'Cloud NodePools per cluster, which get nothing (0-100)',
    },
    store: {
      type: 'string',
      default: 'memory',
      valueName: 'memory|etcd',
      description: 'storage of the local clusters',
    },
    'control-plane': {
      type: 'string',
      default: 'local',
      valueName: 'local|real',
      description:
        'who serves each cluster: local (the embedded API) or real (the built etcd, kube-apiserver, kube-controller-manager and kube-scheduler; needs npm run kube-bins)',
    },
    openyurt: {
      type: 'string',
      valueName: 'v1.5.1|v1.7.0',
      description:
        "install OpenYurt's own CRDs of this release (from its Go module; npm run kube-bins) instead of the project's NodePool CRD, and run that release's yurt-manager beside each cluster (needs root); needs --control-plane real",
    },
    kubelet: {
      type: 'string',
      default: 'sim',
      valueName: 'sim|process|real',
      description:
        'how pods run: sim (Ready after a delay), process (each pool-spirit really runs the built etcd and kube-apiserver with its rendered flags, and the agent) or real (each node is the built kubelet on containerd and runc, the pods from the images of npm run images; needs --control-plane real and root)',
    },
    'ready-delay': {
      type: 'string',
      default: '200',
      valueName: 'MS',
      description: 'sim kubelet: ms from placement to Ready (0-60000)',
    },
    lambda: {
      type: 'string',
      default: 'in-process',
      valueName: 'in-process|rie',
      description:
        "where the functions run: in-process (the handlers, with a Lambda-like context and timeout) or rie (the zips npm run package writes, under AWS's Lambda Runtime Interface Emulator and runtime client; scripts/lambda-rie.sh)",
    },
    'function-threads': {
      type: 'string',
      default: '1',
      valueName: 'N',
      description: "worker threads for the reconcile function's containers, 0 = main thread (0-8)",
    },
    'cluster-threads': {
      type: 'string',
      valueName: 'N',
      description:
        'worker threads running the clusters (API server, kubelet, forwarder), 0 = main thread (default: none below 4 clusters, else one per core)',
    },
    'kubeconfig-dir': {
      type: 'string',
      valueName: 'DIR',
      description: 'where to write one kubeconfig per cluster (default <state-dir>/kubeconfigs)',
    },
    'state-dir': {
      type: 'string',
      valueName: 'DIR',
      description:
        'local state (default .local): dead letters, kubeconfigs, env; with --store etcd also the clusters, table and CA, resumed on the next start',
    },
    json: {
      type: 'boolean',
      description: 'print JSON lines instead of the live view: progress when it changes, a line when converged',
    },
    'exit-when-converged': {
      type: 'boolean',
      description: 'stop and exit 0 once every pool is Available (non-zero on timeout)',
    },
    timeout: {
      type: 'string',
      default: '600',
      valueName: 'SECONDS',
      description: 'with --exit-when-converged: give up after this long',
    },
  },
  details: `
Starts N local clusters seeded with NodePools and Nodes, a forwarder and a local kubelet per cluster, the
local EventBridge-compatible bus with the rules of serverless.yml, dynalite as the state table, and the
reconcile function in a worker thread (--function-threads). Fleets of 4 clusters or more run the clusters in
worker threads too, one per core (--cluster-threads). Shows convergence live; Ctrl-C stops everything.
With --kubelet process every pool-spirit pod really runs: the built etcd (data in /dev/shm) and
kube-apiserver with exactly the args the reconciler rendered, and the agent, which applies the bootstrap
and reports into the PoolSpirit status. With --control-plane real each cluster is real Kubernetes: the built
etcd, kube-apiserver (Node,RBAC and NodeRestriction), kube-controller-manager and kube-scheduler, the
product installed from infra/cluster, and the functions, forwarder and agents each with their own identity;
nodes are simulated. Both need the binaries of \`npm run kube-bins\`; a real control plane is always started
fresh (its etcd is in /dev/shm).

State: with --store etcd --state-dir DIR everything is kept in DIR (each cluster's etcd data, the state
table, the clusters' CA) and a later \`local up\` with the same flags resumes it, also after a crash or
kill -9. Otherwise the clusters and the table are in memory and lost on exit (start-up says so).

Then, in another terminal:
  kubectl --kubeconfig .local/kubeconfigs/cluster-01.kubeconfig get poolspirits
  kubectl --kubeconfig .local/kubeconfigs/cluster-01.kubeconfig apply -f - <<EOF
  apiVersion: apps.openyurt.io/v1beta1
  kind: NodePool
  metadata: { name: shop-17 }
  spec: { type: Edge }
  EOF
  spiritctl local nodes add --cluster cluster-01 --pool shop-17 --count 2`,
  async run({ values }) {
    const clusters = intFlag('clusters', values.clusters, 1, 50);
    const pools = intFlag('pools', values.pools, 0, 500);
    const nodesPerPool = intFlag('nodes-per-pool', values['nodes-per-pool'], 0, 100);
    const cloudPools = intFlag('cloud-pools', values['cloud-pools'], 0, 100);
    const store = choiceFlag('store', values.store, ['memory', 'etcd'] as const);
    const kubelet = choiceFlag('kubelet', values.kubelet, ['sim', 'process', 'real'] as const);
    const controlPlane = choiceFlag('control-plane', values['control-plane'], ['local', 'real'] as const);
    if (kubelet === 'real' && controlPlane !== 'real')
      throw new UsageError('--kubelet real: real nodes join a real control plane; add --control-plane real');
    if (controlPlane === 'real' && store === 'etcd')
      throw new UsageError('--store applies to the local API only: --control-plane real runs its own etcd per cluster');
    const openYurt =
      values.openyurt === undefined ? undefined : choiceFlag('openyurt', values.openyurt, OPENYURT_RELEASES);
    if (openYurt && controlPlane !== 'real')
      throw new UsageError("--openyurt: OpenYurt's CRDs are judged by the real apiserver; add --control-plane real");
    const readyDelayMs = intFlag('ready-delay', values['ready-delay'], 0, 60_000);
    const timeoutS = intFlag('timeout', values.timeout, 1, 86_400);
    const functionThreads = intFlag('function-threads', values['function-threads'], 0, 8);
    const lambda = choiceFlag('lambda', values.lambda, ['in-process', 'rie'] as const);
    const clusterThreads =
      values['cluster-threads'] === undefined
        ? undefined
        : intFlag('cluster-threads', values['cluster-threads'], 0, 64);
    if (clusterThreads && (kubelet === 'process' || controlPlane === 'real'))
      throw new UsageError(
        '--cluster-threads: only the local control plane with the sim kubelet runs in cluster threads',
      );
    const stateDirFlag = values['state-dir'] as string | undefined;
    const stateDir = await directoryFlag('state-dir', stateDirFlag ?? '.local');
    const kubeconfigDir =
      values['kubeconfig-dir'] === undefined
        ? undefined
        : await directoryFlag('kubeconfig-dir', String(values['kubeconfig-dir']));
    // Keeping state is asked for by naming where: the default .local is a scratch directory.
    const persist = store === 'etcd' && stateDirFlag !== undefined;
    const json = Boolean(values.json);
    const live = !json && process.stdout.isTTY;
    const say = (line: string) =>
      process.stdout.write(json ? `${JSON.stringify({ type: 'log', message: line })}\n` : `${line}\n`);

    // Imported here so `spiritctl <other command>` does not pay for loading the whole local stack.
    const { startLocalFleet } = await import('../../dev/local/fleet/fleet.ts');
    const { writeStackEnv } = await import('../../dev/local/fleet/state-dir.ts');
    const { progressJson, progressState, renderProgress, totals } = await import('../../dev/local/fleet/progress.ts');
    say(
      `starting ${clusters} local cluster(s) × ${pools} edge pools × ${nodesPerPool} nodes (${controlPlane === 'real' ? 'real control plane' : `${store} store`}, ${kubelet} kubelet${openYurt ? `, OpenYurt ${openYurt} CRDs` : ''})`,
    );
    say(
      persist
        ? `state kept in ${stateDir} (etcd data, state table, CA): a restart with the same --store and --state-dir resumes it`
        : `state is in memory and lost on exit (only dead letters are kept, in ${stateDir}); --store etcd --state-dir DIR keeps it and resumes it`,
    );
    // On failure startLocalFleet has already stopped whatever it started: nothing is left listening.
    const fleet = await startLocalFleet({
      clusters,
      pools,
      nodesPerPool,
      cloudPools,
      ...(openYurt ? { openYurt } : {}),
      store,
      kubelet,
      controlPlane,
      readyDelayMs,
      functionThreads,
      lambda,
      clusterThreads,
      kubeconfigDir,
      stateDir,
      persist,
      log: say,
    });

    let stopping = false;
    const stop = async (code: number) => {
      if (stopping) return;
      stopping = true;
      say('stopping local fleet…');
      await fleet.stop();
      process.exit(code);
    };
    process.once('SIGINT', () => void stop(0));
    process.once('SIGTERM', () => void stop(0));

    try {
      // spiritctl in another shell (clusters, audit, rollout, events dlq, local nodes) reaches this stack through these.
      const vars = await writeStackEnv(fleet.state, {
        dynamoEndpoint: fleet.dynamo.endpoint,
        busEndpoint: fleet.bus.endpoint,
        eventBusName: fleet.eventBusName,
      });
      say(
        `spiritctl in another shell: source ${fleet.state.envFile}   (SPIRITCTL_DYNAMO_ENDPOINT=${vars.SPIRITCTL_DYNAMO_ENDPOINT})`,
      );
    } catch (err) {
      say(`cannot write ${fleet.state.envFile}: ${(err as Error).message}`);
      return void (await stop(1));
    }

    let drawn = 0;
    let lastState = '';
    let wasConverged = false;
    const show = (p: FleetProgress) => {
      const t = totals(p);
      if (live) {
        const lines = renderProgress(p);
        process.stdout.write(`${drawn ? `\x1b[${drawn}A` : ''}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
        drawn = lines.length;
      } else if (progressState(p) !== lastState) {
        lastState = progressState(p);
        const line = json ? progressJson(p) : renderProgress(p).at(-1);
        if (line === undefined)
          throw new Error('renderProgress returned no lines (it always ends with the fleet line)');
        process.stdout.write(`${line}\n`);
      }
      if (t.converged && !wasConverged)
        say(`converged: ${t.available}/${t.wanted} pools Available in ${(p.elapsedMs / 1000).toFixed(1)} s`);
      wasConverged = t.converged;
    };

    try {
      await fleet.waitConverged(timeoutS * 1000, show);
    } catch (err) {
      say((err as Error).message);
      if (values['exit-when-converged']) return void (await stop(1));
    }
    if (values['exit-when-converged']) return void (await stop(0));
    say(`try: kubectl --kubeconfig ${fleet.clusters[0].kubeconfigPath} get nodepools,poolspirits`);
    say('watching for changes; Ctrl-C to stop');
    // Keep watching: a NodePool added with kubectl converges here (and is printed when something changes).
    const timer = setInterval(() => void fleet.progress().then(show, () => undefined), 1000);
    process.once('exit', () => clearInterval(timer));
    return -1;
  },
};

/** Creates a directory a flag names (a fresh or separate one just works), or says which flag is wrong. */
async function directoryFlag(flag: string, path: string): Promise<string> {
  const dir = resolve(path);
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new UsageError(`--${flag} ${path}: cannot use it as a directory (${e.code ?? e.message})`);
  }
  return dir;
}
