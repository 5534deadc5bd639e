import { stableHash } from '../hash.ts';
import type { KubeObject } from '../kube.ts';
import type { ResolvedPoolSpiritSpec } from '../poolspirit/resolved.ts';
import {
  BOOTSTRAP_HASH_ANNOTATION,
  BOOTSTRAP_HASH_KEY,
  BOOTSTRAP_MANIFESTS_KEY,
  bootstrapManifests,
  COMPAT_BOOTSTRAP_MANIFESTS_YAML,
} from '../render/bootstrap.ts';
import { VOLUMES } from '../render/containers.ts';
import { certFile, keyFile, PKI_FILES } from '../render/pki.ts';
import { type ExtraSans, type LeafSpec, serviceDnsNames } from '../render/pki-spec.ts';
import { APISERVER_SERVICE, COORDINATOR_NAMESPACE, ETCD_TXN_FLAGS } from './contract.ts';
import { coordinatorEtcdAuthArgs } from './etcd-auth.ts';
import { ETCD_CLIENT_CA_FILE, etcdProxyContainer, etcdProxyLeaf, etcdProxyVolume } from './etcd-proxy.ts';
import { coordinatorClientRbac } from './identity.ts';

/** What renderPoolSpirit needs to make one pool a yurt-coordinator drop-in. */
export interface PoolCompatInput {
  /** The cluster's coordinator client CA (core/yurt-coordinator/pki.ts): trusted by this pool's apiserver and etcd proxy. */
  clientCaPem: string;
  /** ClusterIPs of the kube-system Services, once allocated: YurtHub connects to them, so they are SANs. */
  apiServerServiceIP?: string;
  etcdServiceIP?: string;
}

/** The apiserver's extra names. etcd's serving certificate stays a plain pool's: hubs reach the proxy, not etcd. */
export function compatSans(input: PoolCompatInput, clusterDomain: string): ExtraSans {
  return {
    apiserver: {
      dns: serviceDnsNames(APISERVER_SERVICE, COORDINATOR_NAMESPACE, clusterDomain),
      ips: input.apiServerServiceIP ? [input.apiServerServiceIP] : [],
    },
  };
}

/** The leaves a compat pool issues beyond a plain pool's: the etcd proxy's. */
export function compatLeaves(input: PoolCompatInput, clusterDomain: string): LeafSpec[] {
  return [etcdProxyLeaf(clusterDomain, input.etcdServiceIP)];
}

/**
 * Extra files of the pool's -pki Secret: the proxy's certificate and key, and whom the proxy accepts — the
 * coordinator client CA (the hubs) and the pool's etcd CA. Accepting the etcd CA there grants nothing new:
 * every relayed request runs as the proxy's bounded etcd user whoever the client is, and a holder of an
 * etcd-CA certificate already reaches etcd directly from inside the pod.
 */
export function compatPkiFiles(input: PoolCompatInput, pkiFiles: Record<string, string>): Record<string, string> {
  const file = (name: string) => {
    const value = pkiFiles[name];
    if (value === undefined) throw new Error(`compatPkiFiles: the PKI result has no ${name}`);
    return value;
  };
  return {
    [ETCD_CLIENT_CA_FILE]: `${file(PKI_FILES.etcdCaCert).trim()}\n${input.clientCaPem.trim()}\n`,
    [certFile('yurt-coordinator-etcd-proxy')]: file(certFile('yurt-coordinator-etcd-proxy')),
    [keyFile('yurt-coordinator-etcd-proxy')]: file(keyFile('yurt-coordinator-etcd-proxy')),
  };
}

type Container = { name: string; args?: string[] };
type Volume = { name: string; secret?: { secretName?: string } };

/**
 * A compat pool's Deployment: etcd keeps a plain pool's listener (loopback, its own etcd CA only) with
 * upstream's limits for the leader's large transactions; the agent also sets up etcd auth (users, the
 * bounded role, `auth enable`); the etcd proxy is the hub-facing port. Everything else is unchanged.
 */
export function compatDeployment(deployment: KubeObject, spec: ResolvedPoolSpiritSpec): KubeObject {
  const podTemplate = structuredClone(deployment.spec) as {
    template: { spec: { containers: Container[]; volumes: Volume[] } };
  };
  const pod = podTemplate.template.spec;
  const named = (name: string) => {
    const found = pod.containers.find((c) => c.name === name);
    if (!found?.args) throw new Error(`compatDeployment: the Deployment has no ${name} container with args`);
    return found as Container & { args: string[] };
  };
  const etcd = named('etcd');
  for (const [flag, value] of ETCD_TXN_FLAGS) {
    const i = etcd.args.findIndex((a) => a.startsWith(`--${flag}=`));
    if (i >= 0) etcd.args[i] = `--${flag}=${value}`;
    else etcd.args.push(`--${flag}=${value}`);
  }
  named('agent').args.push(...coordinatorEtcdAuthArgs());
  const pkiSecret = pod.volumes.find((v) => v.name === VOLUMES.etcdPki)?.secret?.secretName;
  if (!pkiSecret) throw new Error('compatDeployment: the Deployment has no etcd-pki Secret volume');
  pod.containers.push(etcdProxyContainer(spec) as unknown as Container);
  pod.volumes.push(etcdProxyVolume(pkiSecret) as Volume);
  return { ...deployment, spec: podTemplate };
}

/** The bootstrap of a compat pool: the usual manifests plus the coordinator client's role and binding. */
export function compatBootstrapManifests(): KubeObject[] {
  return [...bootstrapManifests(), ...coordinatorClientRbac()];
}

let compatManifestsHash: string | undefined;
const compatHash = () => (compatManifestsHash ??= stableHash(compatBootstrapManifests()));

/** Replaces the bootstrap ConfigMap's content (and hash) with the compat manifests. */
export function compatBootstrap(configMap: KubeObject): { configMap: KubeObject; hash: string } {
  const hash = compatHash();
  const yaml = COMPAT_BOOTSTRAP_MANIFESTS_YAML;
  return {
    hash,
    configMap: {
      ...configMap,
      metadata: {
        ...configMap.metadata,
        annotations: { ...configMap.metadata.annotations, [BOOTSTRAP_HASH_ANNOTATION]: hash },
      },
      data: { [BOOTSTRAP_MANIFESTS_KEY]: yaml, [BOOTSTRAP_HASH_KEY]: hash },
    },
  };
}
