/**
 * A local fleet in process mode (one cluster, one edge pool, one node), plus what tests need to talk to
 * the pool-spirit's own apiserver as a YurtHub would: node certificates signed by the fleet's cluster CA
 * and raw HTTPS requests whose status codes (401, 403) are what is asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../../../adapters/kubernetes/raw-object-api.ts';
import { clusterAuthority } from '../../../../../dev/local/fleet/cluster-ca.ts';
import { type LocalFleet, startLocalFleet } from '../../../../../dev/local/fleet/fleet.ts';
import { PRODUCT_NAMESPACE } from '../../../../../dev/local/fleet/seed.ts';
import type { ProcessKubelet } from '../../../../../dev/local/kubelet/process-kubelet.ts';
import {
  type CertAndKey,
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
} from '../../../../../dev/local/pki.ts';
import { waitFor } from '../../../../support/wait.ts';

export { waitFor };

type Obj = Record<string, any>;

export interface ProcessFleet {
  fleet: LocalFleet;
  kubelet: ProcessKubelet;
  dir: string;
  stop(): Promise<void>;
}

export async function startProcessFleet(): Promise<ProcessFleet> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-process-fleet-'));
  const fleet = await startLocalFleet({
    clusters: 1,
    pools: 1,
    nodesPerPool: 1,
    cloudPools: 0,
    stateDir: dir,
    readyDelayMs: 20,
    retryBaseDelayMs: 20,
    kubelet: 'process',
  });
  return {
    fleet,
    kubelet: fleet.clusters[0].kubelet as ProcessKubelet,
    dir,
    async stop() {
      await fleet.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The (single) pool-spirit pod in the host cluster that is not being deleted. */
export async function poolSpiritPod(fleet: LocalFleet): Promise<Obj | undefined> {
  const api = RawObjectApi.fromKubeConfig(fleet.clusters[0].kubeConfig);
  const pods = await api.requestJson<{ items: Obj[] }>(HttpMethod.GET, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods`);
  return pods.items.find(
    (p) => p.metadata.labels?.['app.kubernetes.io/name'] === 'pool-spirit' && !p.metadata.deletionTimestamp,
  );
}

export const podKey = (pod: Obj) => `${pod.metadata.namespace}/${pod.metadata.name}`;

/**
 * The Warning Events the kubelet recorded for the pod, one a restart (`BackOff` for a container that exited or
 * failed, `FailedCreatePodContainer` for a start that failed before any ran), oldest first, once at least
 * `atLeast` of the given reasons are there.
 */
export function restartEvents(
  host: RawObjectApi,
  podName: string,
  opts: { atLeast?: number; reasons?: string[] } = {},
): Promise<Obj[]> {
  const { atLeast = 1, reasons = ['BackOff', 'FailedCreatePodContainer'] } = opts;
  return waitFor(
    async () => {
      const list = await host.requestJson<{ items: Obj[] }>(
        HttpMethod.GET,
        `/api/v1/namespaces/${PRODUCT_NAMESPACE}/events`,
      );
      const mine = list.items.filter((e) => e.involvedObject?.name === podName && reasons.includes(e.reason));
      // Oldest first by when each was recorded, not by the list's order (that of the Events' names). Kubernetes
      // keeps Event times in whole seconds (metav1.Time): two restarts in one second go by the revision of each.
      mine.sort(
        (a, b) =>
          String(a.firstTimestamp).localeCompare(String(b.firstTimestamp)) ||
          Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion),
      );
      return mine.length >= atLeast ? mine : undefined;
    },
    20_000,
    `${atLeast} ${reasons.join(' or ')} Event(s) on pod ${podName}`,
  );
}

export { clusterAuthority };

/** A YurtHub's identity: a node client certificate (user system:node:<name>, group system:nodes). */
export function nodeCertificate(ca: CertificateAuthority, node: string): Promise<CertAndKey> {
  return issueClientCertificate(ca, { user: `system:node:${node}`, groups: ['system:nodes'] });
}

/** A node certificate from a CA the pool-spirit does not trust. */
export async function strangerCertificate(node: string): Promise<CertAndKey> {
  return nodeCertificate(await createCertificateAuthority('stranger-ca'), node);
}

export interface HttpsResult {
  status: number;
  body: Obj;
}

/** One HTTPS request to the pool-spirit apiserver, verifying it against the pool CA; `client` is the certificate presented, if any. */
export function call(
  url: string,
  caPem: string,
  method: string,
  path: string,
  opts: { client?: CertAndKey; body?: unknown; contentType?: string } = {},
): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = request(
      `${url}${path}`,
      {
        method,
        ca: caPem,
        ...(opts.client ? { cert: opts.client.certPem, key: opts.client.keyPem } : {}),
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
        },
        timeout: 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Obj = {};
          try {
            body = text ? JSON.parse(text) : {};
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
