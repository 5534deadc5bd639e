/**
 * What a pool-spirit pod runs, read the way a kubelet reads it: the containers' args and env from the pod
 * spec, the mounted Secrets from the host cluster (by the volumes' secretName). Nothing is taken from the
 * renderer's code, so process mode runs what the reconciler actually wrote into the cluster.
 */
import { HttpMethod } from '@kubernetes/client-node';
import type { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { parseAgentArgs } from '../../../agent/options.ts';
import type { AgentOptions } from '../../../agent/options.ts';
import { VOLUMES } from '../../../core/render/containers.ts';
import { NAME_LABEL } from '../../../core/render/labels.ts';
import { certFile, keyFile, PKI_FILES } from '../../../core/render/pki.ts';

type Obj = Record<string, any>;

export const CONTAINERS = { apiServer: 'kube-apiserver', etcd: 'etcd', agent: 'agent' } as const;

/**
 * etcd flags that describe the pod's addresses, TLS files, data dir and membership: process mode replaces
 * them (loopback ports picked by the OS, a data dir in /dev/shm, plain HTTP on loopback). Every other
 * rendered flag (quota, compaction, snapshot count, WAL/snapshot retention, spec.etcd.extraArgs) is kept.
 */
const ETCD_FLAGS_REPLACED = new Set([
  'name', 'data-dir', 'listen-client-urls', 'advertise-client-urls', 'listen-peer-urls', 'initial-advertise-peer-urls',
  'initial-cluster', 'initial-cluster-state', 'listen-metrics-urls', 'cert-file', 'key-file', 'trusted-ca-file',
  'client-cert-auth', 'peer-cert-file', 'peer-key-file', 'peer-trusted-ca-file', 'peer-client-cert-auth',
]);

export interface PoolSpiritPlan {
  /** `namespace/name` of the pod. */
  podKey: string;
  /** The rendered etcd flags process mode keeps, as `--flag=value`. */
  etcdArgs: string[];
  /** The pool's serving certificate and the client CAs the apiserver trusts (client-ca.crt, one PEM each). */
  tls: { certPem: string; keyPem: string; clientCaPems: string[]; caPem: string };
  /** The agent's kubeconfig as rendered (server https://127.0.0.1:<rendered port>); contains its key. */
  agentKubeconfig: string;
  /** The agent container's args and env, parsed by the agent's own parser (kubeconfig path still the rendered one). */
  agent: AgentOptions;
}

export function isPoolSpiritPod(pod: Obj): boolean {
  const names = new Set((pod.spec?.containers ?? []).map((c: Obj) => c.name));
  return pod.metadata?.labels?.[NAME_LABEL] === 'pool-spirit' && Object.values(CONTAINERS).every((n) => names.has(n));
}

export class PodPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PodPlanError';
  }
}

/** Reads the pod's Secrets from the host and builds the plan; a missing Secret or key is a PodPlanError naming it. */
export async function readPoolSpiritPlan(host: RawObjectApi, pod: Obj): Promise<PoolSpiritPlan> {
  const namespace: string = pod.metadata.namespace;
  const containers = new Map<string, Obj>((pod.spec.containers as Obj[]).map((c) => [c.name, c]));
  const pkiName = secretVolume(pod, VOLUMES.apiserverPki);
  const agentName = secretVolume(pod, VOLUMES.agentKubeconfig);
  const [pki, agentSecret] = await Promise.all([readSecret(host, namespace, pkiName), readSecret(host, namespace, agentName)]);
  const need = (files: Record<string, string>, secret: string, key: string) => {
    if (!files[key]) throw new PodPlanError(`Secret ${namespace}/${secret} has no key "${key}"`);
    return files[key];
  };
  const clientCa = need(pki, pkiName, 'client-ca.crt');
  return {
    podKey: `${namespace}/${pod.metadata.name}`,
    etcdArgs: (containers.get(CONTAINERS.etcd)!.args ?? []).filter((arg: string) => !ETCD_FLAGS_REPLACED.has(flagName(arg))),
    tls: {
      certPem: need(pki, pkiName, certFile('apiserver')),
      keyPem: need(pki, pkiName, keyFile('apiserver')),
      clientCaPems: splitPemBundle(clientCa),
      caPem: need(pki, pkiName, PKI_FILES.caCert),
    },
    agentKubeconfig: need(agentSecret, agentName, 'kubeconfig'),
    agent: parseAgentArgs(containers.get(CONTAINERS.agent)!.args ?? [], containerEnv(pod, containers.get(CONTAINERS.agent)!)),
  };
}

function secretVolume(pod: Obj, volume: string): string {
  const name = (pod.spec.volumes ?? []).find((v: Obj) => v.name === volume)?.secret?.secretName;
  if (!name) throw new PodPlanError(`pod ${pod.metadata.name}: volume "${volume}" with a secret is missing`);
  return name;
}

async function readSecret(host: RawObjectApi, namespace: string, name: string): Promise<Record<string, string>> {
  let secret: Obj;
  try {
    secret = await host.requestJson<Obj>(HttpMethod.GET, `/api/v1/namespaces/${namespace}/secrets/${name}`);
  } catch (err) {
    if ((err as { code?: number }).code === 404) throw new PodPlanError(`Secret ${namespace}/${name} not found`);
    throw err;
  }
  return Object.fromEntries(Object.entries((secret.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** The container's env as the kubelet resolves it: literal values and the pod's own metadata fields. */
function containerEnv(pod: Obj, container: Obj): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    const field: string | undefined = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.namespace') env[e.name] = pod.metadata.namespace;
    if (field === 'metadata.name') env[e.name] = pod.metadata.name;
  }
  return env;
}

function flagName(arg: string): string {
  return arg.replace(/^--?/, '').split('=')[0];
}

export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((p) => `${p}\n`) ?? [];
}
