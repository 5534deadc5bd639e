/**
 * The capacity probe's `--local --kubelet real` target: the pool-spirit pod as the reconciler renders and rolls
 * it, run by a real kubelet on containerd and runc (dev/local/kubelet/real), so memory is measured where its
 * limit is enforced: the pod's cgroups, tmpfs included. `local up --control-plane real --kubelet real` with one
 * cluster, one pool and one node; levers (extra flags, environment) go through the PoolSpirit's own spec, as a
 * user would set them, and the reconciler rolls the pod.
 *
 * The pod's etcd listens on its loopback only, and its address exists only inside the node's network
 * namespace, so the probe reaches both ports through relays started in the pod's network namespace: each
 * listens on a unix socket (a file, reachable from this namespace) and dials 127.0.0.1:<port> there; a TCP
 * listener on this machine's loopback joins each connection to its socket. TLS passes through untouched.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { createEtcdAccess } from '../../../agent/adapters/etcd.ts';
import { VOLUMES } from '../../../core/render/containers.ts';
import type { PodCgroupSource } from '../../../probe/capacity/cgroup.ts';
import { cgroupPathOf } from '../../../probe/capacity/cgroup.ts';
import { productEtcdSettings } from '../../../probe/capacity/etcd-settings.ts';
import { kubeHttpForTls } from '../../../probe/capacity/kube-http.ts';
import type { PoolSpiritTarget, PoolSpiritTargetOptions } from '../../../probe/capacity/pool-spirit-target.ts';
import { type LocalFleet, startLocalFleet } from '../fleet/fleet.ts';
import { PRODUCT_NAMESPACE } from '../fleet/seed.ts';
import { type GroupProcess, spawnGroup } from '../kubelet/real/group-process.ts';
import type { RealNode } from '../kubelet/real/real-node.ts';
import { joinSockets } from '../processes/join-sockets.ts';

const RELAY = fileURLToPath(new URL('../kubelet/real/service-relay.ts', import.meta.url));
const POD_SELECTOR = 'app.kubernetes.io%2Fname%3Dpool-spirit';

type Obj = Record<string, unknown>;
interface PodObject {
  metadata: { name: string; uid: string; generation?: number };
  spec: {
    nodeName?: string;
    containers: Array<{ name: string; args?: string[]; env?: Array<{ name: string; value?: string }> }>;
    volumes?: Array<{ name: string; secret?: { secretName: string } }>;
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export class RealNodeTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RealNodeTargetError';
  }
}

/** Starts the one-pool real-node stack, applies the levers through the PoolSpirit and attaches to its pod. */
export async function startRealNodePoolSpiritTarget(o: PoolSpiritTargetOptions): Promise<PoolSpiritTarget> {
  if (o.apiServer === 'upstream')
    throw new RealNodeTargetError(
      "the real node runs the pod the reconciler renders; upstream's flags would need owned flags changed: compare with --local on processes",
    );
  const stateDir = await mkdtemp(join(tmpdir(), 'ps-capacity-node-'));
  let fleet: LocalFleet | undefined;
  try {
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir,
      kubelet: 'real',
      controlPlane: 'real',
      ...(o.log ? { log: o.log } : {}),
    });
    await fleet.waitConverged(240_000);
    const cluster = fleet.clusters[0];
    const node = cluster?.realNodes?.[0];
    if (!cluster || !node) throw new RealNodeTargetError('the real-node stack started without a node');
    if (hasLevers(o)) await applyLevers(cluster.kubeConfig, node.pool, o);
    const attached = await attachToPoolSpiritPod({ admin: cluster.kubeConfig, node, http: o.http, log: o.log });
    const running = fleet;
    return {
      ...attached,
      async stop() {
        await attached.stop();
        await running.stop();
        await rm(stateDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await fleet?.stop().catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
}

export interface AttachOptions {
  admin: KubeConfig;
  node: RealNode;
  http?: PoolSpiritTargetOptions['http'];
  log?: (line: string) => void;
}

/** The pool's Ready pool-spirit pod on `node`, reached as the agent reaches it, its cgroups read from this machine. */
export async function attachToPoolSpiritPod(a: AttachOptions): Promise<PoolSpiritTarget & { pod: PodCgroupSource }> {
  const host = RawObjectApi.fromKubeConfig(a.admin);
  const pod = await readyPod(host, a.node);
  const dir = await mkdtemp(join(tmpdir(), 'ps-cap-'));
  const relays: Array<{ process: GroupProcess; server: Server }> = [];
  const cleanup = async () => {
    for (const r of relays) {
      r.server.close();
      await r.process.stop(1000);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    let pids = await containerPids(a.node, pod.metadata.uid);
    const firstPid = pids.etcd ?? pids['kube-apiserver'];
    if (!firstPid) throw new RealNodeTargetError(`pod ${pod.metadata.name} has no running etcd or kube-apiserver`);
    const netns = `/proc/${firstPid}/ns/net`;
    const apiPort = portOf(flagOf(pod, 'kube-apiserver', 'secure-port'), 'kube-apiserver --secure-port');
    const etcdPort = portOf(
      new URL(flagOf(pod, 'etcd', 'listen-client-urls').split(',')[0] ?? '').port,
      'etcd --listen-client-urls',
    );
    const relay = async (name: string, port: number) => {
      const r = await startPodRelay(dir, name, netns, port);
      relays.push(r);
      return (r.server.address() as { port: number }).port;
    };
    const localApi = await relay('apiserver', apiPort);
    const localEtcd = await relay('etcd', etcdPort);

    const agent = await secretOf(host, pod, VOLUMES.agentKubeconfig);
    const etcdClient = await secretOf(host, pod, VOLUMES.agentEtcdClient);
    const api = kubeHttpForTls(
      `https://127.0.0.1:${localApi}`,
      {
        ca: decode(agent, 'ca.crt'),
        cert: Buffer.from(decode(agent, 'agent.crt')),
        key: Buffer.from(decode(agent, 'agent.key')),
      },
      a.http,
    );
    // Written for the etcd client, which reads files; removed with the directory on stop.
    const files = { ca: join(dir, 'etcd-ca.crt'), cert: join(dir, 'client.crt'), key: join(dir, 'client.key') };
    await writeFile(files.ca, decode(etcdClient, 'etcd-ca.crt'), { mode: 0o600 });
    await writeFile(files.cert, decode(etcdClient, 'apiserver-etcd-client.crt'), { mode: 0o600 });
    await writeFile(files.key, decode(etcdClient, 'apiserver-etcd-client.key'), { mode: 0o600 });
    const access = createEtcdAccess(
      { endpoints: [`https://127.0.0.1:${localEtcd}`], caFile: files.ca, certFile: files.cert, keyFile: files.key },
      undefined,
    );
    const version = cgroupVersion();
    const own = await readFile(`/proc/${firstPid}/cgroup`, 'utf8');
    const containerPath = cgroupPathOf(own, version, 'memory');
    if (!containerPath) throw new RealNodeTargetError(`no memory cgroup in /proc/${firstPid}/cgroup`);
    const podPath = containerPath.slice(0, containerPath.lastIndexOf('/'));
    const source: PodCgroupSource = {
      version,
      root: '/sys/fs/cgroup',
      podPath,
      async containerPids() {
        // Listing containers costs a few ctr calls: only when a container was restarted (new pid).
        if (Object.values(pids).some((pid) => !existsSync(`/proc/${pid}`)))
          pids = await containerPids(a.node, pod.metadata.uid);
        return pids;
      },
    };
    a.log?.(`attached to pod ${pod.metadata.name} on ${a.node.name} (cgroup v${version} ${podPath})`);
    return {
      api,
      etcd: {
        pid: pids.etcd ?? 0,
        dataDir: join(
          a.node.dir,
          'kubelet',
          'pods',
          pod.metadata.uid,
          'volumes',
          'kubernetes.io~empty-dir',
          VOLUMES.etcdData,
        ),
        access,
      },
      apiServerPid: pids['kube-apiserver'] ?? 0,
      args: { etcd: argsOf(pod, 'etcd'), apiServer: argsOf(pod, 'kube-apiserver') },
      pod: source,
      runsOn: { kind: 'real-node', node: a.node.name, pod: pod.metadata.name },
      async stop() {
        api.close();
        access.close();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function hasLevers(o: PoolSpiritTargetOptions): boolean {
  return (
    Object.keys(etcdExtraArgs(o)).length +
      Object.keys(o.apiServerFlags ?? {}).length +
      Object.keys(o.containerEnv ?? {}).length >
    0
  );
}

/** The etcd flags of the run that differ from the rendered product settings: what extraArgs must set. */
function etcdExtraArgs(o: PoolSpiritTargetOptions): Record<string, string> {
  const rendered = productEtcdSettings().flags;
  return Object.fromEntries(Object.entries(o.etcd.flags).filter(([k, v]) => rendered[k] !== v));
}

/** The spec fields that set a run's levers on a pool-spirit whose Deployment renders `containers`. */
export function specLevers(o: PoolSpiritTargetOptions, containers: readonly RenderedContainer[]): Obj {
  const spec: Obj = {};
  const apiArgs = o.apiServerFlags ?? {};
  const etcdArgs = etcdExtraArgs(o);
  if (Object.keys(apiArgs).length) spec.apiServer = { extraArgs: apiArgs };
  if (Object.keys(etcdArgs).length) spec.etcd = { extraArgs: etcdArgs };
  const overrides = envOverrides(o.containerEnv ?? {}, containers);
  if (overrides.length) spec.overrides = overrides;
  return spec;
}

interface RenderedContainer {
  name: string;
  env?: unknown[];
}

/**
 * JSON patch operations (the PoolSpirit's `overrides`) that add environment variables to rendered containers,
 * addressed by their index in the rendered Deployment; a container rendered without `env` gets the list whole.
 */
export function envOverrides(
  env: Record<string, Record<string, string>>,
  containers: readonly RenderedContainer[],
): Obj[] {
  const ops: Obj[] = [];
  for (const [container, vars] of Object.entries(env)) {
    const i = containers.findIndex((c) => c.name === container);
    if (i < 0)
      throw new RealNodeTargetError(
        `containerEnv: no container "${container}" (the pod has ${containers.map((c) => c.name).join(', ')})`,
      );
    const values = Object.entries(vars).map(([name, value]) => ({ name, value }));
    const at = `/spec/template/spec/containers/${i}/env`;
    if (containers[i]?.env) for (const value of values) ops.push({ op: 'add', path: `${at}/-`, value });
    else ops.push({ op: 'add', path: at, value: values });
  }
  return ops;
}

/** What the rolled pod must show for the levers to be in it. */
function expectation(o: PoolSpiritTargetOptions): (pod: PodObject) => boolean {
  return (pod) => {
    const has = (container: string, flags: Record<string, string>) =>
      Object.entries(flags).every(([k, v]) => argsOf(pod, container).includes(`--${k}=${v}`));
    const env = (container: string, vars: Record<string, string>) =>
      Object.entries(vars).every(([k, v]) =>
        pod.spec.containers.find((c) => c.name === container)?.env?.some((e) => e.name === k && e.value === v),
      );
    return (
      has('kube-apiserver', o.apiServerFlags ?? {}) &&
      has('etcd', o.etcd.flags) &&
      Object.entries(o.containerEnv ?? {}).every(([c, vars]) => env(c, vars))
    );
  };
}

async function applyLevers(admin: KubeConfig, pool: string, o: PoolSpiritTargetOptions) {
  const host = RawObjectApi.fromKubeConfig(admin);
  const rolled = expectation(o);
  const path = `/apis/poolspirit.io/v1alpha1/poolspirits/${pool}`;
  const current = await host.requestJson<{ spec: Obj }>(HttpMethod.GET, path);
  const deployments = await host.requestJson<{
    items: Array<{ spec: { template: { spec: { containers: RenderedContainer[] } } } }>;
  }>(HttpMethod.GET, `/apis/apps/v1/namespaces/${PRODUCT_NAMESPACE}/deployments?labelSelector=${POD_SELECTOR}`);
  const [deployment] = deployments.items;
  if (deployments.items.length !== 1 || !deployment)
    throw new RealNodeTargetError(`expected one pool-spirit Deployment, found ${deployments.items.length}`);
  const spec = specLevers(o, deployment.spec.template.spec.containers);
  o.log?.(`levers through PoolSpirit ${pool}: ${JSON.stringify(spec)}`);
  // overrides must be checked in full by the reconciler: send the whole spec.
  await host.requestJson(HttpMethod.PATCH, path, {
    body: { spec: { ...current.spec, ...spec } },
    contentType: 'application/merge-patch+json',
  });
  const deadline = Date.now() + 240_000;
  let seen = 'no pod yet';
  while (Date.now() < deadline) {
    const pods = await host.requestJson<{ items: PodObject[] }>(
      HttpMethod.GET,
      `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods?labelSelector=${POD_SELECTOR}`,
    );
    const ready = pods.items.filter((p) => isReady(p) && rolled(p));
    if (ready.length === 1 && pods.items.length === 1) return;
    seen = pods.items.map((p) => `${p.metadata.name} ready=${isReady(p)} levers=${rolled(p)}`).join(', ') || seen;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const ps = await host.requestJson<{ status?: Obj }>(HttpMethod.GET, path).catch(() => ({ status: {} }));
  throw new RealNodeTargetError(
    `the pool-spirit was not rolled to the levers within 240 s (${seen}); PoolSpirit status: ${JSON.stringify(ps.status)}`,
  );
}

async function readyPod(host: RawObjectApi, node: RealNode): Promise<PodObject> {
  const pods = await host.requestJson<{ items: PodObject[] }>(
    HttpMethod.GET,
    `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods?labelSelector=${POD_SELECTOR}`,
  );
  const pod = pods.items.find((p) => p.spec.nodeName === node.name && isReady(p));
  if (!pod) throw new RealNodeTargetError(`no Ready pool-spirit pod on node ${node.name}`);
  return pod;
}

function isReady(p: PodObject): boolean {
  return (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

async function containerPids(node: RealNode, podUid: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of await node.containers()) {
    const name = c.labels['io.kubernetes.container.name'];
    if (c.labels['io.kubernetes.pod.uid'] === podUid && name && c.pid && c.status === 'RUNNING') out[name] = c.pid;
  }
  return out;
}

async function secretOf(host: RawObjectApi, pod: PodObject, volume: string): Promise<Record<string, string>> {
  const name = pod.spec.volumes?.find((v) => v.name === volume)?.secret?.secretName;
  if (!name) throw new RealNodeTargetError(`pod ${pod.metadata.name} has no Secret volume ${volume}`);
  const secret = await host.requestJson<{ data?: Record<string, string> }>(
    HttpMethod.GET,
    `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${name}`,
  );
  return secret.data ?? {};
}

function decode(data: Record<string, string>, key: string): string {
  const value = data[key];
  if (value === undefined) throw new RealNodeTargetError(`Secret has no key "${key}"`);
  return Buffer.from(value, 'base64').toString('utf8');
}

function argsOf(pod: PodObject, container: string): string[] {
  return pod.spec.containers.find((c) => c.name === container)?.args ?? [];
}

function flagOf(pod: PodObject, container: string, flag: string): string {
  const arg = argsOf(pod, container).find((a) => a.startsWith(`--${flag}=`));
  if (!arg) throw new RealNodeTargetError(`container ${container} has no --${flag}`);
  return arg.slice(flag.length + 3);
}

function portOf(raw: string, what: string): number {
  const port = Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65_535)
    throw new RealNodeTargetError(`${what}: no port in "${raw}"`);
  return port;
}

function cgroupVersion(): 1 | 2 {
  return existsSync('/sys/fs/cgroup/memory/memory.usage_in_bytes') ? 1 : 2;
}

/** A relay into the pod's network namespace (see the header) and its TCP listener on this machine's loopback. */
async function startPodRelay(
  dir: string,
  name: string,
  netns: string,
  port: number,
): Promise<{ process: GroupProcess; server: Server }> {
  const socket = join(dir, `${name}.sock`);
  const proc = spawnGroup(
    `${name}-relay`,
    {
      file: '/usr/bin/setpriv',
      args: [
        '--pdeathsig',
        'KILL',
        '--',
        '/usr/bin/nsenter',
        `--net=${netns}`,
        '--',
        process.execPath,
        RELAY,
        JSON.stringify({ listen: { path: socket }, target: { host: '127.0.0.1', port } }),
      ],
    },
    join(dir, `${name}-relay.log`),
  );
  const deadline = Date.now() + 15_000;
  while (!existsSync(socket)) {
    const end = proc.ended();
    if (end || Date.now() > deadline)
      throw new RealNodeTargetError(`the ${name} relay into the pod did not start: ${proc.lastLines(10)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const server = createServer((from) => joinSockets(from, connect({ path: socket })));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, resolve);
  });
  return { process: proc, server };
}
