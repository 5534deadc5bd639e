import { stableHash } from '../hash.ts';
import type { KubeObject } from '../kube.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { APISERVER_PORT } from './layout.ts';
import type { ObjectNames } from './names.ts';
import { certFile, keyFile, PKI_FILES, type PkiResult } from './pki.ts';
import { AGENT_USER, type LeafId } from './pki-spec.ts';

/**
 * Three Secrets, split by who may read them:
 * - `<base>-ca`: the two CA keys. Never mounted into any pod; only the reconciler reads it to sign.
 * - `<base>-pki`: what kube-apiserver and etcd mount (each container gets only its own files, by items).
 * - `<base>-agent`: the agent's kubeconfig, mounted only into the agent container.
 * All Opaque with file-like keys: each holds several key pairs, which kubernetes.io/tls cannot express.
 */
export const PKI_SECRET_KEYS = {
  ca: [PKI_FILES.caCert, PKI_FILES.caKey, PKI_FILES.etcdCaCert, PKI_FILES.etcdCaKey],
  pki: [
    PKI_FILES.caCert,
    'client-ca.crt',
    PKI_FILES.etcdCaCert,
    certFile('apiserver'),
    keyFile('apiserver'),
    certFile('apiserver-etcd-client'),
    keyFile('apiserver-etcd-client'),
    certFile('etcd-server'),
    keyFile('etcd-server'),
    certFile('etcd-peer'),
    keyFile('etcd-peer'),
    PKI_FILES.saPublic,
    PKI_FILES.saPrivate,
  ],
  agent: [PKI_FILES.caCert, certFile('agent'), keyFile('agent'), 'kubeconfig'],
} as const;

export interface RenderedSecrets {
  objects: KubeObject[];
  /**
   * Hash of the mounted material a running pod cannot pick up in place (the CAs, the service account key
   * pair): it changes exactly when the pod must restart. A restart empties etcd (its data is in memory), so
   * renewed leaf certificates must not cause one: see RELOADED_IN_PLACE.
   */
  restartHash: string;
}

/**
 * Leaf certificates and keys are re-read from the Secret volume while the pod runs, once the kubelet has
 * updated it: kube-apiserver watches its serving pair (dynamic serving certificates), etcd and etcd's
 * clients (the apiserver's etcd client, the gRPC proxy) load theirs on every TLS handshake, and the agent
 * restarts itself in place when its kubeconfig or etcd client files change (agent/credential-files.ts).
 * A Record so that a new LeafId cannot be added without deciding whether it reloads.
 */
const RELOADED_IN_PLACE: Record<LeafId, true> = {
  apiserver: true,
  'apiserver-etcd-client': true,
  'etcd-server': true,
  'etcd-peer': true,
  agent: true,
  'yurt-coordinator-yurthub-client': true,
  // The etcd proxy re-reads its files when they change (agent/etcd-proxy/proxy.ts).
  'yurt-coordinator-etcd-proxy': true,
};
/** The agent's kubeconfig embeds its certificate and key; the CA in it is hashed through ca.crt. */
const RELOADED_FILES = new Set([
  ...Object.keys(RELOADED_IN_PLACE).flatMap((id) => [certFile(id as LeafId), keyFile(id as LeafId)]),
  'kubeconfig',
]);

function restartHashOf(secrets: KubeObject[]): string {
  return stableHash(
    secrets.map((s) =>
      Object.fromEntries(
        Object.entries((s.data ?? {}) as Record<string, string>).filter(([file]) => !RELOADED_FILES.has(file)),
      ),
    ),
  );
}

export function renderSecrets(
  pki: PkiResult,
  clusterCaBundle: string,
  names: ObjectNames,
  namespace: string,
  pool: string,
  /** Extra files for the -pki Secret (a yurt-coordinator-compatible pool's etcd client CA bundle). */
  extraPkiFiles: Record<string, string> = {},
): RenderedSecrets {
  const files: Record<string, string> = {
    ...pki.files,
    ...extraPkiFiles,
    // The apiserver trusts node certificates (cluster CA: YurtHubs) and the agent's certificate (pool CA).
    'client-ca.crt': `${clusterCaBundle.trim()}\n${pkiFile(pki, PKI_FILES.caCert).trim()}\n`,
    kubeconfig: kubeconfigYaml({
      cluster: `poolspirit-${pool}`,
      server: `https://127.0.0.1:${APISERVER_PORT}`,
      caPem: pkiFile(pki, PKI_FILES.caCert),
      certPem: pkiFile(pki, certFile('agent')),
      keyPem: pkiFile(pki, keyFile('agent')),
      user: AGENT_USER,
    }),
  };
  const secret = (name: string, keys: readonly string[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'Opaque',
    data: Object.fromEntries(keys.map((k) => [k, Buffer.from(files[k] ?? missingFile(k)).toString('base64')])),
  });
  const pkiSecret = secret(names.pkiSecret, [...PKI_SECRET_KEYS.pki, ...Object.keys(extraPkiFiles).sort()]);
  const agentSecret = secret(names.agentSecret, PKI_SECRET_KEYS.agent);
  return {
    objects: [secret(names.caSecret, PKI_SECRET_KEYS.ca), pkiSecret, agentSecret],
    restartHash: restartHashOf([pkiSecret, agentSecret]),
  };
}

/**
 * The existingPki input of renderPoolSpirit from the live Secrets (any order, missing ones skipped):
 * their data, base64-decoded and merged by file name.
 */
export function existingPkiFromSecrets(
  secrets: Array<KubeObject | undefined>,
  names: ObjectNames,
): Record<string, string> {
  const out: Record<string, string> = {};
  const ours = new Set([names.caSecret, names.pkiSecret, names.agentSecret]);
  // The CA Secret last: after an interrupted apply its ca.crt is the one that signs, so it must win.
  const ordered = secrets.filter((s): s is KubeObject => !!s && s.kind === 'Secret' && ours.has(s.metadata.name));
  ordered.sort((a, b) => Number(a.metadata.name === names.caSecret) - Number(b.metadata.name === names.caSecret));
  for (const s of ordered) {
    for (const [k, v] of Object.entries((s.data ?? {}) as Record<string, string>)) {
      out[k] = Buffer.from(v, 'base64').toString('utf8');
    }
  }
  return out;
}

/** A file of the PKI result; one it lacks is a renderer bug, named instead of rendered as "undefined". */
function pkiFile(pki: PkiResult, name: string): string {
  return pki.files[name] ?? missingFile(name);
}

function missingFile(name: string): never {
  throw new Error(`render: the PKI result has no ${name}`);
}
