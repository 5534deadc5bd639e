/**
 * A TLS local cluster with client-certificate authentication, a shared throwaway PKI (generated once per
 * worker: key generation is the slow part), and a raw HTTPS client that speaks as a given identity.
 */
import { request } from 'node:https';
import {
  type LocalCluster,
  type LocalClusterOptions,
  startLocalCluster,
} from '../../../../../dev/local/kube-api/index.ts';
import {
  type CertAndKey,
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../../../../dev/local/pki.ts';

export interface Pki {
  ca: CertificateAuthority;
  /** A second CA the cluster does not trust. */
  stranger: CertificateAuthority;
  serving: CertAndKey;
  admin: CertAndKey;
}

let pki: Promise<Pki> | undefined;

export function testPki(): Promise<Pki> {
  pki ??= (async () => {
    const [ca, stranger] = await Promise.all([
      createCertificateAuthority('test-cluster-ca'),
      createCertificateAuthority('stranger-ca'),
    ]);
    const [serving, admin] = await Promise.all([
      issueServingCertificate(ca),
      issueClientCertificate(ca, { user: 'test-admin', groups: ['system:masters'] }),
    ]);
    return { ca, stranger, serving, admin };
  })();
  return pki;
}

/** Client certificates by identity, issued by the cluster CA once per worker. */
const identities = new Map<string, Promise<CertAndKey>>();
export async function identity(user: string, groups: string[] = []): Promise<CertAndKey> {
  const key = JSON.stringify([user, groups]);
  let id = identities.get(key);
  if (!id) {
    id = testPki().then((p) => issueClientCertificate(p.ca, { user, groups }));
    identities.set(key, id);
  }
  return id;
}

export interface RawResponse {
  status: number;
  json: any;
  text: string;
}

export interface AuthCluster {
  cluster: LocalCluster;
  pki: Pki;
  /** One request as `as` (a client certificate) or with no certificate at all. */
  raw(
    as: CertAndKey | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string | string[]>,
  ): Promise<RawResponse>;
  /** As the admin (system:masters); fails on a non-2xx answer. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

export async function startAuthCluster(opts: Omit<LocalClusterOptions, 'tls'> = {}): Promise<AuthCluster> {
  const p = await testPki();
  const cluster = await startLocalCluster({
    authorization: 'RBAC',
    ...opts,
    tls: { ...p.serving, clientCaPems: [p.ca.certPem], caPem: p.ca.certPem },
  });
  const raw: AuthCluster['raw'] = (as, method, path, body, extraHeaders = {}) =>
    new Promise((resolve, reject) => {
      const url = new URL(cluster.url + path);
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        url,
        {
          method,
          ca: p.ca.certPem,
          ...(as ? { cert: as.certPem, key: as.keyPem } : {}),
          agent: false,
          // A caller's content-type (e.g. apply-patch+yaml, whose YAML JSON already is) overrides the JSON default.
          headers: {
            ...(text === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
            ...extraHeaders,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const t = Buffer.concat(chunks).toString('utf8');
            let json: any;
            try {
              json = JSON.parse(t);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json, text: t });
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  return {
    cluster,
    pki: p,
    raw,
    async admin(method, path, body) {
      const res = await raw(p.admin, method, path, body);
      if (res.status < 200 || res.status > 299)
        throw new Error(`${method} ${path} as admin: ${res.status} ${res.text}`);
      return res.json;
    },
    stop: () => cluster.stop(),
  };
}

let counter = 0;
export function unique(prefix: string): string {
  return `${prefix}-${process.pid % 10000}-${++counter}`;
}

export const RBAC = 'rbac.authorization.k8s.io';

/** kube's 403 Status body. */
export function forbiddenStatus(message: string, details: Record<string, string>) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Forbidden',
    details,
    code: 403,
  };
}

export function clusterRoleBinding(name: string, role: string, subjects: Array<Record<string, string>>) {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: role },
    subjects,
  };
}

export function roleBinding(
  namespace: string,
  name: string,
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string },
  subjects: Array<Record<string, string>>,
) {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: RBAC, ...roleRef },
    subjects,
  };
}

export const user = (name: string) => ({ apiGroup: RBAC, kind: 'User', name });
export const group = (name: string) => ({ apiGroup: RBAC, kind: 'Group', name });

export function pod(name: string) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
}
