/**
 * `npm run bench -- warm-pass`: the CPU one reconcile pass costs a warm Lambda environment, as the cloud runs it.
 *
 * The reconcile function is bundled exactly as `npm run package` bundles it (serverless.yml's esbuild options,
 * scripts/bundle-functions.ts) and loaded by processes of its own (lib/pass-container.ts), each one warm
 * execution environment: the function's NODE_OPTIONS and environment, its handler built from the environment
 * (`depsFromEnvironment`: the SDK's DynamoDB client, cluster access, the dead-letter sink), a Lambda context.
 * Each call's CPU time (user + system, every thread of that process) is measured around the handler. The
 * cluster is the built control plane (kube-apiserver and etcd, processes of their own, without the
 * controllers: the bench stands in for them by marking each pool's Deployment available), the table dynalite
 * in this process, so neither's CPU is counted.
 *
 * Measured, per build:
 * - `create`: a new pool's first pass (renders, issues its certificates, applies every object);
 * - `noop`: a converged pool's pass on an environment that has passed it before (reads only, writes nothing);
 * - `noopFirstSight`: the same on an environment that has not seen the pool (a Lambda fleet spreads a pool's
 *   passes over many environments, so most of a pool's passes land on one that has not);
 * - `anchor`: a fixed piece of JavaScript in the same processes (lib/pass-container.ts), for the host's speed.
 * `--against REV` builds the function at that git revision too and measures both in the same run, interleaved
 * pass by pass; ratios are of the medians. `--profile DIR` also writes each phase's CPU profile (inspector,
 * 100 µs sampling) and reports self time by function and module, mapped through the bundle's source maps; a
 * profiled run's CPU figures include the profiler's own cost. `--control-plane local` puts the embedded local
 * API (plain HTTP, in this process) in place of the built control plane: a quicker look, not the judge.
 * `--one-core CPU` runs every container on that CPU alone and the rest (the bench, the servers) on the others:
 * a server woken on the container's CPU would otherwise take it mid-pass (a Lambda function of 512 MB has a
 * fraction of one vCPU, and its servers are elsewhere).
 */
import { type ChildProcess, execFile, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { type ClusterAccess, createStateTable, registerCluster } from '../../adapters/state-table/index.ts';
import { UsageError } from '../../cli/command.ts';
import { DEFAULT_NAMESPACE, type KubeObject } from '../../core/index.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../dev/local/dynamodb.ts';
import { startLocalCluster } from '../../dev/local/kube-api/index.ts';
import { createCertificateAuthority } from '../../dev/local/pki.ts';
import { startRealHostCluster } from '../../dev/local/real-cluster/control-plane.ts';
import { installProduct, PRODUCT_IDENTITIES } from '../../dev/local/real-cluster/install.ts';
import { buildBundle, ROOT, readServerlessBuild } from '../../scripts/bundle-functions.ts';
import { applyCrds, publishClusterCa } from '../../test/support/local-cluster.ts';
import { NODE_22 } from './bundles.ts';
import { readCpuProfile, type SelfTime, selfTime } from './lib/cpuprofile.ts';
import type { ContainerAnswer, ContainerRequest, InvokeAnswer } from './lib/pass-container.ts';
import { sourcesAtRevision } from './lib/revision.ts';
import { median, percentile, round } from './lib/stats.ts';

const exec = promisify(execFile);
const FUNCTION = 'reconcile';
const TABLE = 'pool-spirit-reconciler-dev-state';
const CLUSTER_ID = 'c1';
const CONTAINER_SCRIPT = join(import.meta.dirname, 'lib', 'pass-container.ts');

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** One warm execution environment: a process with the bundle loaded. */
class Container {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, (a: ContainerAnswer) => void>();
  private readonly ready: Promise<void>;
  private stderr = '';

  readonly label: string;

  constructor(label: string, bundle: string, env: Record<string, string>) {
    this.label = label;
    this.child = fork(CONTAINER_SCRIPT, [bundle], {
      execPath: NODE_22,
      execArgv: [],
      cwd: dirname(bundle),
      env,
      // The function's log lines go where Lambda's would go, out of the way; its errors come back by IPC.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString('utf8')).slice(-4000);
    });
    let started: () => void = () => undefined;
    let failed: (err: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    this.child.on('message', (a: ContainerAnswer) => {
      if (a.kind === 'ready') return started();
      this.pending.get(a.id)?.(a);
      this.pending.delete(a.id);
    });
    this.child.on('exit', (code, signal) => {
      const err = new Error(`container ${label} exited (${signal ?? `code ${code}`}): ${this.stderr}`);
      failed(err);
      for (const [, resolve] of this.pending) resolve({ id: 0, kind: 'failed', error: err.message });
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  started(): Promise<void> {
    return this.ready;
  }

  private ask(req: WithoutId<ContainerRequest>): Promise<ContainerAnswer> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.send({ ...req, id });
    });
  }

  async invoke(event: unknown): Promise<InvokeAnswer> {
    const a = await this.ask({ kind: 'invoke', event, requestId: randomUUID() });
    if (a.kind !== 'invoke') throw new Error(`container ${this.label}: ${a.kind === 'failed' ? a.error : a.kind}`);
    return a;
  }

  async anchor(): Promise<number> {
    const a = await this.ask({ kind: 'anchor' });
    if (a.kind !== 'anchor') throw new Error(`container ${this.label}: ${a.kind === 'failed' ? a.error : a.kind}`);
    return (a.userUs + a.systemUs) / 1000;
  }

  async profile(action: 'start' | 'stop', file = ''): Promise<void> {
    const a =
      action === 'start' ? await this.ask({ kind: 'profile-start' }) : await this.ask({ kind: 'profile-stop', file });
    if (a.kind === 'failed') throw new Error(`container ${this.label}: ${a.error}`);
  }

  stop(): void {
    this.child.kill();
  }
}

/** Pins every thread of a process to the CPUs listed (threads it starts later inherit it). */
async function pin(pid: number, cpus: string): Promise<void> {
  await exec('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)]);
}

function otherCpus(cpu: number): string {
  const others = Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => i !== cpu);
  if (others.length === 0)
    throw new UsageError('--one-core: this machine has one CPU; nothing would be left for the servers');
  return others.join(',');
}

/** A build of the function under test: this tree's, or a revision's (`--against`). */
interface Build {
  name: string;
  /** The sources it was built from: what its profile's paths are shown relative to. */
  root: string;
  bundle: string;
  /** Creates pools and passes them again: the environment that has seen them. */
  seen: Container;
  /** Passes pools it has never passed: a converged pool's pass on another environment. */
  fresh: Container;
  samples: Record<Phase, number[]> & {
    wallMs: Record<Phase, number[]>;
    mainThreadMs: Record<Phase, number[]>;
    anchor: number[];
  };
  pools: string[];
}

const PHASES = ['create', 'noop', 'noopFirstSight'] as const;
type Phase = (typeof PHASES)[number];

const cpuMs = (a: InvokeAnswer) => (a.userUs + a.systemUs) / 1000;

const summary = (xs: number[]) => ({
  median: round(median(xs), 3),
  p10: round(percentile(xs, 10), 3),
  p90: round(percentile(xs, 90), 3),
  samples: xs.length,
});

/** A Reconcile Request as the bus delivers it (its time in whole seconds, as EventBridge writes it). */
function reconcileRequest(pool: string): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Reconcile Request',
    source: 'pool-spirit.reconciler',
    account: '000000000000',
    time: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    region: 'eu-west-1',
    resources: [],
    detail: { clusterId: CLUSTER_ID, nodePool: pool, reason: 'bench', requestedBy: 'bench' },
  };
}

/** The function's environment as serverless.yml gives it, its AWS endpoints the local ones. */
function functionEnvironment(dynamo: LocalDynamo, nodeOptions: string, taskRoot: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_OPTIONS: nodeOptions,
    STATE_TABLE_NAME: TABLE,
    EVENT_BUS_NAME: 'pool-spirit-reconciler-dev',
    CLUSTER_ACCESS_MODE: 'eks',
    POWERTOOLS_SERVICE_NAME: 'pool-spirit-reconciler',
    // Nothing is dead-lettered here; an address that refuses keeps a mistake from leaving the machine.
    DEAD_LETTER_QUEUE_URL: 'http://127.0.0.1:9/000000000000/ReconcileDeadLetterQueue',
    AWS_REGION: 'eu-west-1',
    AWS_DEFAULT_REGION: 'eu-west-1',
    // A role's credentials carry a session token, which every request signs too.
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_LAMBDA_FUNCTION_NAME: `pool-spirit-reconciler-dev-${FUNCTION}`,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    LAMBDA_TASK_ROOT: taskRoot,
  };
}

/** The function bundled from the sources under `root` with their serverless.yml, and how Lambda starts Node for it. */
async function buildFunction(root: string, outdir: string): Promise<{ bundle: string; nodeOptions: string }> {
  const mod = (await import(
    pathToFileURL(join(root, 'scripts', 'bundle-functions.ts')).href
  )) as typeof import('../../scripts/bundle-functions.ts');
  const build = mod.readServerlessBuild(join(root, 'serverless.yml'));
  const fn = build.functions.find((f) => f.name === FUNCTION);
  if (!fn) throw new Error(`${root}/serverless.yml: no function ${FUNCTION}`);
  return { bundle: (await mod.buildBundle(build, fn.entry, outdir)).file, nodeOptions: build.nodeOptions };
}

type ControlPlane = 'real' | 'local';

interface ClusterSide {
  admin: RawObjectApi;
  access: ClusterAccess;
  stop(): Promise<void>;
}

/** The built control plane with the product installed, reached as the shipped reconciler identity. */
async function startRealCluster(log: (line: string) => void): Promise<ClusterSide> {
  const ca = await createCertificateAuthority('warm-pass-cluster-ca');
  const cluster = await startRealHostCluster({ name: 'warm-pass', ca, controllers: false, log });
  try {
    const admin = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    await applyCrds(admin);
    await installProduct(cluster.kubeConfig);
    await publishClusterCa(admin, ca.certPem);
    const path = join(cluster.dir, 'reconciler.kubeconfig');
    await cluster.writeKubeconfig(path, PRODUCT_IDENTITIES.reconciler);
    // The reconciler's own identity (client certificate, shipped RBAC) from a kubeconfig file: what a `secret`
    // registration resolves to, without Secrets Manager.
    return { admin, access: { kind: 'kubeconfig-file', path }, stop: () => cluster.stop() };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** The embedded local API (in this process, anonymous over plain HTTP): a quicker look, not the judge. */
async function startLocalApi(): Promise<ClusterSide> {
  const cluster = await startLocalCluster({ port: 0 });
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'admin', server: cluster.url, skipTLSVerify: true }, { name: 'admin' });
  const admin = RawObjectApi.fromKubeConfig(kc);
  await applyCrds(admin);
  await admin.createJson({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEFAULT_NAMESPACE } });
  await publishClusterCa(admin, (await createCertificateAuthority('warm-pass-cluster-ca')).certPem);
  return { admin, access: { kind: 'url', url: cluster.url }, stop: () => cluster.stop() };
}

/** The cluster, and dynalite with the state table and the cluster registered. */
async function startWorld(controlPlane: ControlPlane, log: (line: string) => void) {
  const cluster = controlPlane === 'real' ? await startRealCluster(log) : await startLocalApi();
  try {
    const dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, TABLE);
    const table = createStateTable({ client: dynamo.client, tableName: TABLE });
    await registerCluster(table, { id: CLUSTER_ID, access: cluster.access }, new Date());
    return {
      admin: cluster.admin,
      dynamo,
      async stop() {
        await dynamo.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

async function createNodePool(admin: RawObjectApi, name: string): Promise<void> {
  await admin.createJson({
    apiVersion: 'apps.openyurt.io/v1beta2',
    kind: 'NodePool',
    metadata: { name },
    spec: { type: 'Edge' },
  });
}

/**
 * What kube-controller-manager and a kubelet would make of the pool's Deployment once its pod runs: rolled
 * out and available at its generation.
 */
async function markAvailable(admin: RawObjectApi, pool: string): Promise<void> {
  const path = `/apis/apps/v1/namespaces/${DEFAULT_NAMESPACE}/deployments/ps-${pool}`;
  const d = await admin.requestJson<KubeObject>(HttpMethod.GET, path);
  const replicas = (d.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  const at = new Date().toISOString();
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    lastUpdateTime: at,
    lastTransitionTime: at,
  });
  await admin.requestJson(HttpMethod.PUT, `${path}/status`, {
    body: {
      ...d,
      status: {
        observedGeneration: d.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          condition('Available', 'MinimumReplicasAvailable'),
          condition('Progressing', 'NewReplicaSetAvailable'),
        ],
      },
    },
  });
}

/** A create pass, then the Deployment made available and passes until one writes nothing. */
async function createAndSettle(admin: RawObjectApi, container: Container, pool: string): Promise<InvokeAnswer> {
  await createNodePool(admin, pool);
  const created = await container.invoke(reconcileRequest(pool));
  expectResult(created, pool, 'create', (r) => r === 'applied');
  await markAvailable(admin, pool);
  for (let i = 0; i < 5; i++) {
    const pass = await container.invoke(reconcileRequest(pool));
    expectResult(pass, pool, 'settle', (r) => r === 'applied' || r === 'unchanged');
    if (pass.result?.result === 'unchanged') return created;
  }
  throw new Error(`pool ${pool}: still writing after 5 passes`);
}

function expectResult(a: InvokeAnswer, pool: string, what: string, ok: (result: string | undefined) => boolean) {
  if (a.error || !ok(a.result?.result))
    throw new Error(`pool ${pool}, ${what} pass: ${a.error ?? JSON.stringify(a.result)}`);
}

export async function run(args: string[] = []): Promise<object> {
  const { values } = parseArgs({
    args,
    options: {
      pools: { type: 'string', default: '20' },
      noops: { type: 'string', default: '100' },
      warmup: { type: 'string', default: '10' },
      against: { type: 'string' },
      profile: { type: 'string' },
      keep: { type: 'string' },
      'control-plane': { type: 'string', default: 'real' },
      'one-core': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stderr.write(
      'usage: npm run bench -- warm-pass [--pools N (create passes, 20)] [--noops N (100)] [--warmup N (10)] [--against GIT-REV] [--profile DIR] [--keep DIR] [--control-plane real|local] [--one-core CPU]\n',
    );
    return {};
  }
  const count = (flag: string, value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag}: expected a whole number ≥ 1, got ${value}`);
    return n;
  };
  const pools = count('pools', values.pools);
  const noops = count('noops', values.noops);
  const warmup = count('warmup', values.warmup);
  const controlPlane = values['control-plane'];
  if (controlPlane !== 'real' && controlPlane !== 'local')
    throw new UsageError(`--control-plane: expected real or local, got ${controlPlane}`);
  const log = (line: string) => process.stderr.write(`warm-pass: ${line}\n`);
  const oneCore = values['one-core'] === undefined ? undefined : Number(values['one-core']);
  if (oneCore !== undefined && !(Number.isInteger(oneCore) && oneCore >= 0 && oneCore < availableParallelism()))
    throw new UsageError(
      `--one-core: expected a CPU number from 0 to ${availableParallelism() - 1}, got ${values['one-core']}`,
    );
  // The bench and everything it starts (the control plane, dynalite) stay off the containers' CPU: a server
  // woken on that CPU would take it from the container mid-pass.
  if (oneCore !== undefined) await pin(process.pid, otherCpus(oneCore));

  const outdir = values.keep ?? (await mkdtemp(join(tmpdir(), 'ps-warm-pass-')));
  const profileDir = values.profile;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const builds: Build[] = [];
  let world: Awaited<ReturnType<typeof startWorld>> | undefined;
  let floor: Container | undefined;
  try {
    log(`bundling ${FUNCTION} as npm run package does, in ${outdir}`);
    const sources = [{ name: 'current', root: ROOT }];
    if (values.against)
      sources.push({ name: values.against, root: await sourcesAtRevision(values.against, join(outdir, 'against')) });
    const [bundles, floorBundle] = await Promise.all([
      Promise.all(
        sources.map(async (s, i) => ({ ...s, ...(await buildFunction(s.root, join(outdir, `build-${i}`))) })),
      ),
      buildBundle(readServerlessBuild(), 'dev/bench/lib/io-floor.ts', join(outdir, 'io-floor')),
    ]);
    log('starting the control plane (kube-apiserver, etcd) and dynalite');
    world = await startWorld(controlPlane, log);
    const { admin, dynamo } = world;
    for (const b of bundles) {
      const env = functionEnvironment(dynamo, b.nodeOptions, dirname(b.bundle));
      builds.push({
        name: b.name,
        root: b.root,
        bundle: b.bundle,
        seen: new Container(`${b.name}/seen`, b.bundle, env),
        fresh: new Container(`${b.name}/fresh`, b.bundle, env),
        samples: {
          create: [],
          noop: [],
          noopFirstSight: [],
          anchor: [],
          wallMs: { create: [], noop: [], noopFirstSight: [] },
          mainThreadMs: { create: [], noop: [], noopFirstSight: [] },
        },
        pools: [],
      });
    }
    const ioFloor = new Container(
      'io-floor',
      floorBundle.file,
      functionEnvironment(dynamo, bundles[0].nodeOptions, dirname(floorBundle.file)),
    );
    floor = ioFloor;
    const floorSamples: number[] = [];
    const containers = [...builds.flatMap((b) => [b.seen, b.fresh]), ioFloor];
    await Promise.all(containers.map((c) => c.started()));
    if (oneCore !== undefined) await Promise.all(containers.map((c) => pin(c.pid, String(oneCore))));

    // Warm-up: JIT, the connections, discovery and the cluster CA read; every environment passes pools of its
    // own, new and converged, so the code every measured phase runs is compiled.
    log(`warming up (${warmup} pools per build)`);
    for (const [bi, b] of builds.entries()) {
      for (let i = 0; i < warmup; i++) {
        const seenPool = `warm-${bi}-${i}`;
        const freshPool = `warm-${bi}-${i}-f`;
        await createAndSettle(admin, b.seen, seenPool);
        await createAndSettle(admin, b.fresh, freshPool);
        for (let k = 0; k < 3; k++) {
          await b.seen.invoke(reconcileRequest(seenPool));
          await b.fresh.invoke(reconcileRequest(freshPool));
        }
      }
    }

    for (let bi = 0; bi < builds.length; bi++)
      for (let i = 0; i < warmup; i++)
        for (let k = 0; k < 3; k++) await ioFloor.invoke(reconcileRequest(`warm-${bi}-${i}`));

    const phase = async (name: Phase, body: () => Promise<void>) => {
      const profiled = (b: Build) => (name === 'noopFirstSight' ? b.fresh : b.seen);
      if (profileDir) for (const b of builds) await profiled(b).profile('start');
      await body();
      if (profileDir)
        for (const [bi, b] of builds.entries())
          await profiled(b).profile('stop', join(profileDir, `${bi}-${name}.cpuprofile`));
    };
    const anchor = async (always = false) => {
      // Not inside a profile: it is not the function's work.
      if (profileDir && !always) return;
      for (const b of builds) b.samples.anchor.push(await b.seen.anchor(), await b.fresh.anchor());
    };
    for (let i = 0; i < 5; i++) await anchor(true);

    log(`create passes: ${pools} new pools per build, interleaved`);
    await phase('create', async () => {
      for (let i = 0; i < pools; i++) {
        for (const [bi, b] of builds.entries()) {
          const pool = `new-${bi}-${i}`;
          await createNodePool(admin, pool);
          const a = await b.seen.invoke(reconcileRequest(pool));
          expectResult(a, pool, 'create', (r) => r === 'applied');
          b.samples.create.push(cpuMs(a));
          b.samples.wallMs.create.push(a.wallMs);
          b.samples.mainThreadMs.create.push(a.mainThreadUs / 1000);
          b.pools.push(pool);
        }
        await anchor();
      }
    });
    log('settling the new pools');
    for (const b of builds)
      for (const pool of b.pools) {
        await markAvailable(admin, pool);
        for (let k = 0; ; k++) {
          const a = await b.seen.invoke(reconcileRequest(pool));
          expectResult(a, pool, 'settle', (r) => r === 'applied' || r === 'unchanged');
          if (a.result?.result === 'unchanged') break;
          if (k === 4) throw new Error(`pool ${pool}: still writing after 5 passes`);
        }
      }

    log(`no-op passes: ${noops} per build, interleaved`);
    await phase('noop', async () => {
      for (let i = 0; i < noops; i++) {
        for (const b of builds) {
          const pool = b.pools[i % b.pools.length];
          const a = await b.seen.invoke(reconcileRequest(pool));
          expectResult(a, pool, 'no-op', (r) => r === 'unchanged');
          if (a.result?.clusterWrites !== 0)
            throw new Error(`pool ${pool}: a no-op pass wrote ${a.result?.clusterWrites}`);
          b.samples.noop.push(cpuMs(a));
          b.samples.wallMs.noop.push(a.wallMs);
          b.samples.mainThreadMs.noop.push(a.mainThreadUs / 1000);
        }
        const floorPass = await ioFloor.invoke(reconcileRequest(builds[0].pools[i % builds[0].pools.length]));
        if (floorPass.error) throw new Error(`I/O floor: ${floorPass.error}`);
        floorSamples.push(cpuMs(floorPass));
        if (i % 5 === 4) await anchor();
      }
    });

    log('no-op passes on an environment that has not seen the pool');
    await phase('noopFirstSight', async () => {
      // Each build's own pools: what a build keeps in a pool's state for its next pass is part of what it is.
      for (let i = 0; i < pools; i++) {
        for (const b of builds) {
          const pool = b.pools[i];
          const a = await b.fresh.invoke(reconcileRequest(pool));
          expectResult(a, pool, 'first-sight no-op', (r) => r === 'unchanged');
          b.samples.noopFirstSight.push(cpuMs(a));
          b.samples.wallMs.noopFirstSight.push(a.wallMs);
          b.samples.mainThreadMs.noopFirstSight.push(a.mainThreadUs / 1000);
        }
      }
      await anchor();
    });

    const report = (b: Build) => {
      const anchorMs = median(b.samples.anchor);
      return {
        bundle: b.bundle,
        cpuMs: Object.fromEntries(PHASES.map((p) => [p, summary(b.samples[p])])),
        /** The main thread's part of cpuMs; the rest ran on V8's and libuv's own threads. */
        mainThreadCpuMs: Object.fromEntries(PHASES.map((p) => [p, summary(b.samples.mainThreadMs[p])])),
        wallMs: Object.fromEntries(PHASES.map((p) => [p, summary(b.samples.wallMs[p])])),
        anchorCpuMs: summary(b.samples.anchor),
        /** Each phase's median CPU in anchors: comparable across runs on hosts of different speed. */
        inAnchors: Object.fromEntries(PHASES.map((p) => [p, round(median(b.samples[p]) / anchorMs, 2)])),
        /** The no-op pass's median over the I/O floor's: how much of it is round trips the pass makes. */
        noopOverIoFloor: round(median(b.samples.noop) / median(floorSamples), 2),
      };
    };
    const [current, ...rest] = builds;
    const against = rest[0];
    let profiles: Record<string, Record<Phase, SelfTime>> | undefined;
    if (profileDir) {
      profiles = {};
      for (const [bi, b] of builds.entries())
        profiles[b.name] = Object.fromEntries(
          PHASES.map((p) => [p, selfTime(readCpuProfile(join(profileDir, `${bi}-${p}.cpuprofile`)), b.root)]),
        ) as Record<Phase, SelfTime>;
    }
    return {
      benchmark: 'warm-pass',
      config: {
        function: FUNCTION,
        node: NODE_22,
        pools,
        noops,
        warmup,
        controlPlane:
          controlPlane === 'real'
            ? 'built kube-apiserver + etcd (no controllers; the bench marks Deployments available), the reconciler identity by client certificate'
            : 'the embedded local API, anonymous over HTTP',
        table: 'dynalite (in the bench process)',
        profiled: profileDir !== undefined,
        /** The CPU every container ran on alone (`--one-core`), the rest of the bench on the others. */
        oneCore: oneCore ?? null,
        loadAverage: loadavg().map((x) => round(x)),
      },
      /**
       * The requests of today's no-op pass (3 table calls, 9 cluster reads) through the product's own clients and
       * nothing else (lib/io-floor.ts), on converged pools, interleaved with the no-op passes.
       */
      ioFloorCpuMs: summary(floorSamples),
      builds: Object.fromEntries(builds.map((b) => [b.name, report(b)])),
      ...(against
        ? {
            /** current ÷ against, of the medians of the same run. */
            ratio: Object.fromEntries(
              PHASES.map((p) => [p, round(median(current.samples[p]) / median(against.samples[p]), 3)]),
            ),
            anchorRatio: round(median(current.samples.anchor) / median(against.samples.anchor), 3),
          }
        : {}),
      ...(profiles ? { profiles } : {}),
    };
  } finally {
    for (const b of builds) {
      b.seen.stop();
      b.fresh.stop();
    }
    floor?.stop();
    await world?.stop();
    if (!values.keep) await rm(outdir, { recursive: true, force: true });
  }
}
