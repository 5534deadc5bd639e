import type { KeyObject } from 'node:crypto';
import { labelValue } from './labels.ts';
import type { ObjectNames } from './names.ts';

/**
 * What the per-pool PKI consists of. Two CAs, as kubeadm does: the pool CA (apiserver serving certificate,
 * the agent's client certificate) and an etcd CA that etcd alone trusts, so no client certificate of the
 * apiserver side (and no node certificate) can ever talk to etcd directly.
 */
// The yurt-coordinator ids belong to one cluster, not a pool: core/yurt-coordinator/pki.ts.
export type CaId = 'ca' | 'etcd-ca' | 'yurt-coordinator-client-ca';
export type LeafId =
  | 'apiserver'
  | 'apiserver-etcd-client'
  | 'etcd-server'
  | 'etcd-peer'
  | 'agent'
  | 'yurt-coordinator-yurthub-client'
  | 'yurt-coordinator-etcd-proxy';

export interface LeafSpec {
  id: LeafId;
  issuer: CaId;
  subject: string;
  dns: string[];
  ips: string[];
  usages: Array<'serverAuth' | 'clientAuth'>;
}

export interface PkiPolicy {
  caValidityDays: number;
  leafValidityDays: number;
  /** Renew a certificate when it expires within this many days. */
  renewBeforeDays: number;
}

export const DAY_MS = 86_400_000;

/** A certificate and its key, as PEM. */
export interface Issued {
  certPem: string;
  keyPem: string;
  notAfter: Date;
  /** The key when it was just generated; a reused key is read from keyPem only to sign. */
  privateKey?: KeyObject;
}

export const DEFAULT_PKI_POLICY: PkiPolicy = { caValidityDays: 3650, leafValidityDays: 365, renewBeforeDays: 30 };

/**
 * The agent's identity inside its own pool-spirit apiserver. It is a dedicated user (visible as such in
 * audit logs) in group system:masters. Why a superuser: etcd is in memory, so after every pod start the
 * agent must re-create the NodePool CRD and RBAC that grants `admin` to system:nodes; RBAC only lets a
 * user create such bindings if it already holds those permissions (or bind/escalate, which is equivalent),
 * and nothing exists before the agent's first write, so some identity must be a superuser. Containment:
 * the key is only in the agent's Secret, mounted only into the agent container, its kubeconfig points at
 * 127.0.0.1, and it grants nothing in the cluster itself. YurtHubs, unlike upstream, never get
 * system:masters: they use node certificates and system:nodes → admin.
 */
export const AGENT_USER = 'poolspirit:agent';
export const AGENT_GROUP = 'system:masters';

/**
 * The etcd client identity of kube-apiserver and the agent. etcd names a client by its certificate's CN when
 * etcd auth is on (a yurt-coordinator-compatible pool), so this is also an etcd user there, with etcd's root role.
 */
export const APISERVER_ETCD_CLIENT_USER = 'poolspirit-apiserver-etcd-client';

export function caSubject(id: CaId, pool: string): string {
  // The pool goes in OU, shortened like a label value: X.509 caps name attributes at 64 characters.
  return `CN=${id === 'ca' ? 'poolspirit-ca' : 'poolspirit-etcd-ca'}, OU=${labelValue(pool)}, O=pool-spirit`;
}

/** The Service DNS names a client inside the cluster may use, shortest first. */
export function serviceDnsNames(service: string, namespace: string, clusterDomain: string): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.${clusterDomain}`,
  ];
}

/** Names a serving certificate carries beyond the pool's own (a yurt-coordinator-compatible pool's Service names). */
export type ExtraSans = Partial<Record<'apiserver' | 'etcd-server', { dns: string[]; ips: string[] }>>;

export function leafSpecs(
  names: ObjectNames,
  namespace: string,
  clusterDomain: string,
  serviceClusterIP?: string,
  extra: ExtraSans = {},
): LeafSpec[] {
  const loopback = { dns: ['localhost'], ips: ['127.0.0.1'] };
  const apiserverIps = ['127.0.0.1', ...(serviceClusterIP ? [serviceClusterIP] : []), ...(extra.apiserver?.ips ?? [])];
  return [
    {
      id: 'apiserver',
      issuer: 'ca',
      subject: 'CN=poolspirit-apiserver, O=pool-spirit',
      dns: ['localhost', ...serviceDnsNames(names.base, namespace, clusterDomain), ...(extra.apiserver?.dns ?? [])],
      ips: apiserverIps,
      usages: ['serverAuth'],
    },
    {
      id: 'agent',
      issuer: 'ca',
      subject: `CN=${AGENT_USER}, O=${AGENT_GROUP}`,
      dns: [],
      ips: [],
      usages: ['clientAuth'],
    },
    {
      id: 'etcd-server',
      issuer: 'etcd-ca',
      subject: 'CN=poolspirit-etcd-server',
      dns: [...loopback.dns, ...(extra['etcd-server']?.dns ?? [])],
      ips: [...loopback.ips, ...(extra['etcd-server']?.ips ?? [])],
      usages: ['serverAuth', 'clientAuth'],
    },
    {
      id: 'etcd-peer',
      issuer: 'etcd-ca',
      subject: 'CN=poolspirit-etcd-peer',
      ...loopback,
      usages: ['serverAuth', 'clientAuth'],
    },
    {
      id: 'apiserver-etcd-client',
      issuer: 'etcd-ca',
      subject: `CN=${APISERVER_ETCD_CLIENT_USER}`,
      dns: [],
      ips: [],
      usages: ['clientAuth'],
    },
  ];
}
