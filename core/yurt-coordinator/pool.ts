import { stringify } from 'yaml';
import { stableHash } from '../hash.ts';
import type { KubeObject } from '../kube.ts';
import {
  BOOTSTRAP_HASH_ANNOTATION,
  BOOTSTRAP_HASH_KEY,
  BOOTSTRAP_MANIFESTS_KEY,
  bootstrapManifests,
} from '../render/bootstrap.ts';
import { ETCD_CLIENT_PORT, PKI_DIR } from '../render/layout.ts';
import { PKI_FILES } from '../render/pki.ts';
import { serviceDnsNames, type ExtraSans } from '../render/pki-spec.ts';
import { APISERVER_SERVICE, COORDINATOR_NAMESPACE, ETCD_SERVICE, ETCD_TXN_FLAGS } from './contract.ts';
import { coordinatorClientRbac } from './identity.ts';

/** What renderPoolSpirit needs to make one pool a yurt-coordinator drop-in. */
export interface PoolCompatInput {
  /** The cluster's coordinator client CA (core/yurt-coordinator/pki.ts): trusted by this pool's apiserver and etcd. */
  clientCaPem: string;
  /** ClusterIPs of the kube-system Services, once allocated: YurtHub connects to them, so they are SANs. */
  apiServerServiceIP?: string;
  etcdServiceIP?: string;
}

/** etcd's client CA bundle in a compat pool: its own etcd CA (the apiserver, the agent) plus the coordinator client CA. */
export const ETCD_CLIENT_CA_FILE = 'etcd-client-ca.crt';

export function compatSans(input: PoolCompatInput, clusterDomain: string): ExtraSans {
  return {
    apiserver: {
      dns: serviceDnsNames(APISERVER_SERVICE, COORDINATOR_NAMESPACE, clusterDomain),
      ips: input.apiServerServiceIP ? [input.apiServerServiceIP] : [],
    },
    'etcd-server': {
      dns: serviceDnsNames(ETCD_SERVICE, COORDINATOR_NAMESPACE, clusterDomain),
      ips: input.etcdServiceIP ? [input.etcdServiceIP] : [],
    },
  };
}

/** Extra files of the pool's -pki Secret. */
export function compatPkiFiles(input: PoolCompatInput, pkiFiles: Record<string, string>): Record<string, string> {
  return { [ETCD_CLIENT_CA_FILE]: `${pkiFiles[PKI_FILES.etcdCaCert]!.trim()}\n${input.clientCaPem.trim()}\n` };
}

type Container = { name: string; args?: string[]; ports?: Array<Record<string, unknown>> };
type Volume = { name: string; secret?: { items?: Array<{ key: string; path: string }> } };

/**
 * The etcd container of a compat pool: client port on every address (YurtHubs connect from their nodes),
 * still TLS with client-certificate auth, trusting the coordinator client CA too; upstream's limits for the
 * leader's large transactions. Everything else in the Deployment is unchanged.
 */
export function compatDeployment(deployment: KubeObject): KubeObject {
  const spec = structuredClone(deployment.spec) as {
    template: { spec: { containers: Container[]; volumes: Volume[] } };
  };
  const pod = spec.template.spec;
  const etcd = pod.containers.find((c) => c.name === 'etcd');
  if (!etcd?.args) throw new Error('compatDeployment: the Deployment has no etcd container with args');
  const set = (flag: string, value: string) => {
    const i = etcd.args!.findIndex((a) => a.startsWith(`--${flag}=`));
    if (i >= 0) etcd.args![i] = `--${flag}=${value}`;
    else etcd.args!.push(`--${flag}=${value}`);
  };
  set('listen-client-urls', `https://0.0.0.0:${ETCD_CLIENT_PORT}`);
  set('trusted-ca-file', `${PKI_DIR}/${ETCD_CLIENT_CA_FILE}`);
  for (const [flag, value] of ETCD_TXN_FLAGS) set(flag, value);
  etcd.ports = [...(etcd.ports ?? []), { name: 'etcd-client', containerPort: ETCD_CLIENT_PORT, protocol: 'TCP' }];
  const etcdPki = pod.volumes.find((v) => v.name === 'etcd-pki');
  if (!etcdPki?.secret?.items) throw new Error('compatDeployment: the Deployment has no etcd-pki Secret volume');
  etcdPki.secret.items.push({ key: ETCD_CLIENT_CA_FILE, path: ETCD_CLIENT_CA_FILE });
  return { ...deployment, spec };
}

/** The bootstrap of a compat pool: the usual manifests plus the coordinator client's role and binding. */
export function compatBootstrapManifests(): KubeObject[] {
  return [...bootstrapManifests(), ...coordinatorClientRbac()];
}

/** Replaces the bootstrap ConfigMap's content (and hash) with the compat manifests. */
export function compatBootstrap(configMap: KubeObject): { configMap: KubeObject; hash: string } {
  const manifests = compatBootstrapManifests();
  const hash = stableHash(manifests);
  const yaml = manifests.map((m) => stringify(m, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
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
