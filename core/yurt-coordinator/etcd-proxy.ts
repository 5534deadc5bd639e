import type { ResolvedPoolSpiritSpec } from '../poolspirit/resolved.ts';
import { CONTAINER_SECURITY_CONTEXT } from '../render/containers.ts';
import { ETCD_CLIENT_PORT, ETCD_PROXY_PKI_DIR, ETCD_PROXY_PORT } from '../render/layout.ts';
import { certFile, keyFile, PKI_FILES } from '../render/pki.ts';
import { type LeafSpec, serviceDnsNames } from '../render/pki-spec.ts';
import { COORDINATOR_NAMESPACE, ETCD_PROXY_COMMAND, ETCD_SERVICE, STORAGE_PREFIX } from './contract.ts';
import { COORDINATOR_ETCD_PROXY_USER } from './etcd-auth.ts';

export const ETCD_PROXY_CONTAINER = 'etcd-proxy';
export const ETCD_PROXY_VOLUME = 'etcd-proxy-pki';
/** Whom the proxy accepts: the pool's etcd CA and the cluster's coordinator client CA (core/yurt-coordinator/pool.ts). */
export const ETCD_CLIENT_CA_FILE = 'etcd-client-ca.crt';

/**
 * The proxy's one certificate, from the pool's etcd CA: it serves the hubs under the coordinator etcd
 * Service's names (the hubs verify it with the pool's etcd CA from their ca.crt bundle) and is the client
 * identity etcd maps to the bounded user (CN).
 */
export function etcdProxyLeaf(clusterDomain: string, etcdServiceIP?: string): LeafSpec {
  return {
    id: 'yurt-coordinator-etcd-proxy',
    issuer: 'etcd-ca',
    subject: `CN=${COORDINATOR_ETCD_PROXY_USER}`,
    dns: ['localhost', ...serviceDnsNames(ETCD_SERVICE, COORDINATOR_NAMESPACE, clusterDomain)],
    ips: ['127.0.0.1', ...(etcdServiceIP ? [etcdServiceIP] : [])],
    usages: ['serverAuth', 'clientAuth'],
  };
}

/**
 * Measured on the bundled image code (docs/decisions/0024-coordinator-etcd-auth.md): 78 MiB resident idle,
 * 99 MiB after 2 000 relayed reads and a 20 MiB write (bytes are streamed, so a larger message does not grow
 * it). The agent's 128Mi limit would leave too little room; the proxy has its own.
 */
export const ETCD_PROXY_RESOURCES = { requests: { cpu: '10m', memory: '96Mi' }, limits: { memory: '192Mi' } };

const dir = (file: string) => `${ETCD_PROXY_PKI_DIR}/${file}`;
const PROXY_FILES = [
  PKI_FILES.etcdCaCert,
  ETCD_CLIENT_CA_FILE,
  certFile('yurt-coordinator-etcd-proxy'),
  keyFile('yurt-coordinator-etcd-proxy'),
];

/**
 * The proxy runs from the agent image (agent/etcd-proxy/), in a container of its own: the code facing the
 * network holds neither the root-capable etcd client key nor the ServiceAccount token the agent has. It
 * relays each hub connection to etcd's loopback port under its own certificate, and serves nothing until
 * etcd refuses that identity a read of the whole storage prefix (etcd auth on, role bounded).
 */
export function etcdProxyContainer(spec: ResolvedPoolSpiritSpec): Record<string, unknown> {
  return {
    name: ETCD_PROXY_CONTAINER,
    image: spec.agent.image,
    args: [
      ETCD_PROXY_COMMAND,
      `--listen-url=https://0.0.0.0:${ETCD_PROXY_PORT}`,
      `--etcd-endpoint=https://127.0.0.1:${ETCD_CLIENT_PORT}`,
      `--cert-file=${dir(certFile('yurt-coordinator-etcd-proxy'))}`,
      `--key-file=${dir(keyFile('yurt-coordinator-etcd-proxy'))}`,
      `--trusted-ca-file=${dir(ETCD_CLIENT_CA_FILE)}`,
      `--etcd-ca-file=${dir(PKI_FILES.etcdCaCert)}`,
      `--refused-prefix=${STORAGE_PREFIX}/`,
    ],
    ports: [{ name: 'etcd-proxy', containerPort: ETCD_PROXY_PORT, protocol: 'TCP' }],
    // Listening means etcd bounds the proxy's identity: until then the pod is not ready for hubs.
    readinessProbe: { tcpSocket: { port: ETCD_PROXY_PORT }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
    resources: ETCD_PROXY_RESOURCES,
    securityContext: CONTAINER_SECURITY_CONTEXT,
    volumeMounts: [{ name: ETCD_PROXY_VOLUME, mountPath: ETCD_PROXY_PKI_DIR, readOnly: true }],
  };
}

export function etcdProxyVolume(pkiSecret: string): Record<string, unknown> {
  return {
    name: ETCD_PROXY_VOLUME,
    secret: { secretName: pkiSecret, defaultMode: 0o440, items: PROXY_FILES.map((key) => ({ key, path: key })) },
  };
}
