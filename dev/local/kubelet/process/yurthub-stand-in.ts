/**
 * The YurtHub side of a process-mode pool that has no real YurtHub: one node of the pool runs client-go's
 * leader election (core/leader, YurtHub's 15 s / 10 s / 2 s) on Lease kube-system/yurthub inside the
 * pool-spirit, authenticating as YurtHub does — a node client certificate signed by the cluster CA — so the
 * request path is the real one (TLS client auth, RBAC poolspirit:yurthub). The agent then sees a leader and
 * reports it, as it would in a live pool.
 */
import { request } from 'node:https';
import { type Lease, nextLeaseAction, YURTHUB_LEADER_ELECTION, YURTHUB_LEASE } from '../../../../core/leader/index.ts';
import { type CertAndKey, type CertificateAuthority, issueClientCertificate } from '../../pki.ts';

export interface LeaderStandInOptions {
  apiServerUrl: string;
  /** Verifies the pool-spirit's serving certificate. */
  caPem: string;
  nodeName: string;
  /** The cluster CA, which node certificates chain to. */
  clusterCa: CertificateAuthority;
  onError?: (err: Error) => void;
}

export interface LeaderStandIn {
  stop(): void;
}

const REPORT_AFTER_MS = 30_000;
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${YURTHUB_LEASE.namespace}/leases`;

export async function startLeaderStandIn(opts: LeaderStandInOptions): Promise<LeaderStandIn> {
  const client = await issueClientCertificate(opts.clusterCa, {
    user: `system:node:${opts.nodeName}`,
    groups: ['system:nodes'],
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let failingSince: number | undefined;
  const round = async () => {
    try {
      const read = await send(opts, client, 'GET', `${LEASE_PATH}/${YURTHUB_LEASE.name}`);
      const lease = read.status === 404 ? undefined : (read.body as Lease);
      if (read.status !== 404 && read.status !== 200)
        throw new Error(`GET Lease ${YURTHUB_LEASE.name}: HTTP ${read.status}`);
      const action = nextLeaseAction(lease, opts.nodeName, new Date(), YURTHUB_LEADER_ELECTION);
      if (action.kind === 'create') await expectOk(send(opts, client, 'POST', LEASE_PATH, action.lease), 'create');
      else if (action.kind !== 'wait')
        await expectOk(send(opts, client, 'PUT', `${LEASE_PATH}/${YURTHUB_LEASE.name}`, action.lease), action.kind);
      failingSince = undefined;
    } catch (err) {
      // Until the agent has applied the bootstrap RBAC every request is 403, and a restarting pool-spirit
      // refuses connections: the next round tries again, as YurtHub's elector does. Only a failure that
      // outlasts that is reported.
      failingSince ??= Date.now();
      if (!stopped && Date.now() - failingSince > REPORT_AFTER_MS) opts.onError?.(err as Error);
    }
    if (!stopped) timer = setTimeout(() => void round(), YURTHUB_LEADER_ELECTION.retryPeriodSeconds * 1000);
  };
  void round();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

async function expectOk(result: Promise<{ status: number }>, what: string): Promise<void> {
  const { status } = await result;
  // 409: another writer moved the Lease between our read and write; the next round reads it again.
  if (status >= 300 && status !== 409) throw new Error(`${what} Lease ${YURTHUB_LEASE.name}: HTTP ${status}`);
}

function send(
  opts: LeaderStandInOptions,
  client: CertAndKey,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${opts.apiServerUrl}${path}`,
      {
        method,
        ca: opts.caPem,
        cert: client.certPem,
        key: client.keyPem,
        timeout: 5_000,
        headers: { accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}
