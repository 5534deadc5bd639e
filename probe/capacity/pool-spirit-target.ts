/**
 * The `--local` target: a real pool-spirit. The PoolSpirit is rendered exactly as the reconciler renders it
 * (default bundle, fresh PKI), and its etcd and kube-apiserver containers run as the built binaries with
 * the rendered args (local/kubelet/process/real-control-plane.ts translates only paths and ports): TLS
 * everywhere, etcd's data dir in /dev/shm as the `medium: Memory` emptyDir keeps it.
 *
 * A profile changes only flags of the rendered containers, so product and upstream differ in exactly the
 * flags the report lists. The probe talks to the apiserver as the rendered agent identity
 * (system:masters) and to etcd with the agent's client certificate, the way the agent does.
 */
import { join } from 'node:path';
import { createEtcdAccess, type EtcdAccess } from '../../agent/adapters/etcd.ts';
import { parsePoolSpiritSpec, renderPoolSpirit, webCryptoKeyFactory, type KubeObject, type NodePool } from '../../core/index.ts';
import { VOLUMES } from '../../core/render/containers.ts';
import { certFile, keyFile, PKI_FILES } from '../../core/render/pki.ts';
import { startRealControlPlane, type PodContainer, type PodSpec, type RealControlPlane } from '../../local/kubelet/process/real-control-plane.ts';
import * as x509 from '../../shared/x509.ts';
import type { EtcdSettings } from './etcd-settings.ts';
import { kubeHttpForTls, type KubeHttp, type KubeHttpOptions } from './kube-http.ts';

const POOL = 'capacity-probe';
const NAMESPACE = 'pool-spirit-system';
const AGENT_ETCD_VOLUME = VOLUMES.agentEtcdClient;
const DAY_MS = 86_400_000;

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
  log?: (line: string) => void;
  http?: KubeHttpOptions;
}

export interface PoolSpiritTarget {
  api: KubeHttp;
  etcd: { pid: number; dataDir: string; access: EtcdAccess };
  apiServerPid: number;
  /** The args each container ran with, as rendered (before path and port translation). */
  args: { etcd: string[]; apiServer: string[] };
  stop(): Promise<void>;
}

export async function startPoolSpiritTarget(o: PoolSpiritTargetOptions): Promise<PoolSpiritTarget> {
  const rendered = await renderProbePod();
  const pod = withProfile(rendered.pod, o.etcd.flags, o.apiServer, o.apiServerFlags);
  const plane = await startRealControlPlane({ pod, secret: rendered.secret, log: o.log });
  try {
    const agent = await rendered.secret(rendered.agentSecret);
    const decode = (key: string) => Buffer.from(agent[key] ?? missingKey(rendered.agentSecret, key), 'base64');
    const api = kubeHttpForTls(plane.apiServerUrl, { ca: plane.caPem, cert: decode('agent.crt'), key: decode('agent.key') }, o.http);
    const access = etcdAccessFor(plane);
    return {
      api,
      etcd: { pid: plane.pids.etcd, dataDir: plane.etcdDataDir, access },
      apiServerPid: plane.pids.apiServer,
      args: { etcd: containerArgs(pod, 'etcd'), apiServer: containerArgs(pod, 'kube-apiserver') },
      async stop() {
        api.close();
        access.close();
        await plane.stop();
      },
    };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/**
 * The pod with etcd's flags set to `etcdFlags`, for upstream the apiserver's memory flags removed, and
 * `apiServerFlags` laid over the apiserver's.
 */
export function withProfile(pod: PodSpec, etcdFlags: Record<string, string>, apiServer: ApiServerProfile, apiServerFlags: Record<string, string> = {}): PodSpec {
  const containers = pod.containers.map((c): PodContainer => {
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
    if (name === undefined || !rest.has(name)) return arg;
    const value = rest.get(name)!;
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

function containerArgs(pod: PodSpec, name: string): string[] {
  return pod.containers.find((c) => c.name === name)?.args ?? [];
}

function etcdAccessFor(plane: RealControlPlane): EtcdAccess {
  const dir = plane.volumeDir(AGENT_ETCD_VOLUME);
  if (!dir) throw new Error(`rendered pod has no volume ${AGENT_ETCD_VOLUME} (the agent's etcd client certificate)`);
  return createEtcdAccess(
    {
      endpoints: [plane.etcdClientUrl],
      caFile: join(dir, PKI_FILES.etcdCaCert),
      certFile: join(dir, certFile('apiserver-etcd-client')),
      keyFile: join(dir, keyFile('apiserver-etcd-client')),
    },
    undefined,
  );
}

function missingKey(secret: string, key: string): never {
  throw new Error(`rendered Secret ${secret} has no key "${key}"`);
}

type SecretObject = KubeObject & { data?: Record<string, string> };

/** Renders the default PoolSpirit for a probe pool, as the reconciler would, with a fresh PKI. */
async function renderProbePod() {
  const parsed = parsePoolSpiritSpec({ nodePool: POOL });
  if (!parsed.ok) throw new Error(`probe PoolSpirit spec: ${JSON.stringify(parsed.issues)}`);
  const keys = webCryptoKeyFactory();
  const now = new Date();
  const nodePool: NodePool = { apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', metadata: { name: POOL, uid: `uid-np-${POOL}` }, spec: { type: 'Edge' } };
  const out = await renderPoolSpirit({
    poolSpirit: { metadata: { name: POOL, uid: `uid-ps-${POOL}` }, spec: parsed.spec },
    nodePool,
    cluster: { caBundlePem: await selfSignedCaPem(keys, now), clusterDomain: 'cluster.local', namespace: NAMESPACE },
    now,
    keys,
  });
  const deployment = out.objects.find((o) => o.kind === 'Deployment') as (KubeObject & { spec: { template: { spec: PodSpec } } }) | undefined;
  if (!deployment) throw new Error('rendered PoolSpirit has no Deployment');
  const secrets = new Map(out.objects.filter((o) => o.kind === 'Secret').map((s) => [s.metadata.name, (s as SecretObject).data ?? {}]));
  const secret = async (name: string) => secrets.get(name) ?? Promise.reject(new Error(`rendered PoolSpirit has no Secret ${name}`));
  return { pod: deployment.spec.template.spec, secret, agentSecret: out.names.agentSecret };
}

/** A stand-in for the host cluster's CA (it would sign YurtHub node certificates; the probe presents none). */
async function selfSignedCaPem(keys: ReturnType<typeof webCryptoKeyFactory>, now: Date): Promise<string> {
  const pair = await keys.generateKeyPair('cluster-ca');
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=capacity-probe-cluster-ca',
      keys: pair,
      notBefore: now,
      notAfter: new Date(now.getTime() + DAY_MS),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    },
    keys.crypto,
  );
  return cert.toString('pem');
}

