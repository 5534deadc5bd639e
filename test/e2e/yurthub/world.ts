/**
 * The yurthub e2e world: one cluster on the real control plane with the process kubelet, OpenYurt
 * v1.5.1's own CRDs and its yurt-manager (the release of the hubs), the product installed with
 * infra/cluster/components/yurt-coordinator-compat (as an operator using compat would), its
 * edge pools labelled for yurt-coordinator compat (so each pool-spirit is rendered as a coordinator drop-in),
 * no simulated leader, and real YurtHub v1.5.1 processes — `hubsPerPool` per pool — electing in the
 * pool-spirits. The certs Secret the hubs read is the one the reconciler wrote, as its own identity; the
 * harness only adds the operator's node-lease-proxy keys.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { objectNames } from '../../../core/render/names.ts';
import { PKI_FILES } from '../../../core/render/pki.ts';
import {
  CERTS_SECRET_KEYS,
  COMPAT_COMPONENT_PATH,
  COMPAT_LABEL,
  COMPAT_VALUE,
  LEADER_LEASE,
} from '../../../core/yurt-coordinator/index.ts';
import { clusterAuthority } from '../../../dev/local/fleet/cluster-ca.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { PRODUCT_NAMESPACE, poolName } from '../../../dev/local/fleet/seed.ts';
import type { CertAndKey, CertificateAuthority } from '../../../dev/local/pki.ts';
import { type FleetHubs, startFleetHubs } from '../../../dev/local/yurthub/fleet-hubs.ts';
import { readCertsSecret, readCoordinatorClient } from '../../../dev/local/yurthub/host-install.ts';
import { call as callPoolSpirit, type HttpsResult } from '../../dev/local/kubelet/process/world.ts';
import { waitFor } from '../../support/wait.ts';

export type { HttpsResult };

type Obj = Record<string, any>;

export interface YurtHubWorld {
  fleet: LocalFleet;
  hubs: FleetHubs;
  pools: string[];
  hostCa: CertificateAuthority;
  /** The shared coordinator client identity YurtHubs present (from the reconciler's Secret). */
  coordinatorClient: CertAndKey;
  /**
   * How the tests read a pool-spirit: its agent's identity (from the rendered -agent Secret), so that every
   * request the audit log shows under the coordinator identity was made by a real hub.
   */
  observer(pool: string): CertAndKey;
  dir: string;
  /** When the hubs were started. */
  hubsStartedAt: number;
  stop(): Promise<void>;
}

/**
 * yurt-manager v1.5.1's controllers without `yurtcoordinatorcert`, as docs/openyurt.md asks of clusters with
 * compat pools; the default (the harness's) runs it.
 */
export const CONTROLLERS_WITHOUT_COORDINATOR_CERT = ['nodepool', 'delegatelease', 'podbinding', 'csrapprover'];

export async function startYurtHubWorld(shape: {
  pools: number;
  hubsPerPool: number;
  /** yurt-manager's `--controllers`; default the harness's, `yurtcoordinatorcert` among them. */
  yurtManagerControllers?: string[];
}): Promise<YurtHubWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-yurthub-'));
  const fleet = await startLocalFleet({
    clusters: 1,
    pools: shape.pools,
    nodesPerPool: shape.hubsPerPool,
    cloudPools: 0,
    stateDir: dir,
    readyDelayMs: 20,
    retryBaseDelayMs: 20,
    kubelet: 'process',
    controlPlane: 'real',
    openYurt: 'v1.5.1',
    ...(shape.yurtManagerControllers ? { yurtManagerControllers: shape.yurtManagerControllers } : {}),
    productComponents: [COMPAT_COMPONENT_PATH],
    simulateLeader: false,
    edgePoolLabels: { [COMPAT_LABEL]: COMPAT_VALUE },
  });
  try {
    await fleet.waitConverged(150_000);
    const pools = Array.from({ length: shape.pools }, (_, i) => poolName(i));
    const hostCa = clusterAuthority(fleet.clusterCa);
    const cluster = fleet.clusters[0]!;
    const host = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    const coordinatorClient = await readCoordinatorClient(cluster.kubeConfig, PRODUCT_NAMESPACE);
    await waitForReconcilerCerts(cluster.kubeConfig, host, pools, coordinatorClient);
    const hubsStartedAt = Date.now();
    const hubs = await startFleetHubs({ cluster, hostCa, pools, hubsPerPool: shape.hubsPerPool, dir });
    const observers = new Map<string, CertAndKey>();
    for (const pool of pools) {
      const secret = await host.requestJson<Obj>(
        HttpMethod.GET,
        `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${objectNames(pool).agentSecret}`,
      );
      const kc = parse(Buffer.from(secret.data.kubeconfig, 'base64').toString('utf8'));
      const b64 = (v: string) => Buffer.from(v, 'base64').toString('utf8');
      observers.set(pool, {
        certPem: b64(kc.users[0].user['client-certificate-data']),
        keyPem: b64(kc.users[0].user['client-key-data']),
      });
    }
    return {
      fleet,
      hubs,
      pools,
      hostCa,
      coordinatorClient,
      dir,
      hubsStartedAt,
      observer: (pool) => observers.get(pool)!,
      async stop() {
        await hubs.stop();
        await fleet.stop();
        // YURTHUB_E2E_KEEP=1 keeps the hubs' logs (<dir>/yurthubs/<node>.log) for a look after the run.
        if (process.env.YURTHUB_E2E_KEEP === '1') console.log(`yurthub e2e: kept ${dir}`);
        else await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await fleet.stop();
    throw err;
  }
}

/**
 * Until the reconciler has written kube-system/yurt-coordinator-yurthub-certs for every pool: each pool's CA
 * and etcd CA in ca.crt, and the shared client pair. The hubs start only then (a hub that finds no Secret
 * waits for it, but the first-leader figures would then measure the reconciler, not the election).
 */
async function waitForReconcilerCerts(
  kc: Parameters<typeof readCertsSecret>[0],
  host: RawObjectApi,
  pools: string[],
  client: CertAndKey,
): Promise<void> {
  const cas: string[] = [];
  for (const pool of pools) {
    const secret = await host.requestJson<Obj>(
      HttpMethod.GET,
      `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${objectNames(pool).caSecret}`,
    );
    const b64 = (v: string) => Buffer.from(v, 'base64').toString('utf8').trim();
    cas.push(b64(secret.data[PKI_FILES.caCert]), b64(secret.data[PKI_FILES.etcdCaCert]));
  }
  // Only a yes or no leaves the check: the Secret holds a private key.
  await waitFor(
    async () => {
      const files = await readCertsSecret(kc);
      const bundle = files[CERTS_SECRET_KEYS.ca] ?? '';
      return cas.every((ca) => bundle.includes(ca)) && files[CERTS_SECRET_KEYS.clientCert] === client.certPem;
    },
    60_000,
    'the reconciler to write every pool into kube-system/yurt-coordinator-yurthub-certs',
    250,
  );
}

/**
 * One HTTPS request to a pool-spirit apiserver, verified against its pool CA, presenting `client`: the
 * process-kubelet world's request, with a certificate only.
 */
export function call(
  url: string,
  caPem: string,
  method: string,
  path: string,
  client?: CertAndKey,
): Promise<HttpsResult> {
  return callPoolSpirit(url, caPem, method, path, client ? { client } : {});
}

/** A node's Lease in kube-node-lease of a pool's pool-spirit (`spirit`: a given incarnation), read as the agent. */
export function nodeLeaseIn(
  world: YurtHubWorld,
  pool: string,
  node: string,
  spirit: { apiServerUrl: string; caPem: string } = world.hubs.spiritOf(pool),
): Promise<HttpsResult> {
  return call(
    spirit.apiServerUrl,
    spirit.caPem,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`,
    world.observer(pool),
  );
}

/** The holder of Lease kube-system/yurthub in a pool's pool-spirit. */
export async function leaderOf(
  world: YurtHubWorld,
  pool: string,
): Promise<{ holder?: string; renewTime?: string; transitions?: number }> {
  const s = world.hubs.spiritOf(pool);
  const r = await call(
    s.apiServerUrl,
    s.caPem,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${LEADER_LEASE.namespace}/leases/${LEADER_LEASE.name}`,
    world.observer(pool),
  );
  if (r.status === 404) return {};
  if (r.status !== 200)
    throw new Error(`GET lease in ${pool}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return {
    holder: r.body.spec?.holderIdentity,
    renewTime: r.body.spec?.renewTime,
    transitions: r.body.spec?.leaseTransitions,
  };
}

export async function hostApi(world: YurtHubWorld): Promise<RawObjectApi> {
  return RawObjectApi.fromKubeConfig(world.fleet.clusters[0]!.kubeConfig);
}

export { HttpMethod };

/** etcd's /version over its client port (TLS, client certificate required). */
export function etcdVersion(endpoint: string, caPem: string, client: CertAndKey): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${endpoint}/version`,
      { ca: caPem, cert: client.certPem, key: client.keyPem, timeout: 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString('utf8'))
            : reject(new Error(`HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Leaves the host's node Leases to the hubs. The process kubelet of this world renews every node's Lease in
 * kube-node-lease itself (dev/local/kubelet/node-heartbeats.ts, started by sim-kubelet.ts with a real control
 * plane), straight to the host apiserver: that path never crosses a hub's host link, so a node cut off from the
 * host would keep a fresh Lease there. On an OpenYurt edge node the kubelet talks to the host only through its
 * YurtHub, which answers the kubelet's Lease requests locally (v1.5.1 pkg/yurthub/proxy/proxy.go,
 * handleKubeletLease) and renews the node Lease itself on each health probe (pkg/yurthub/healthchecker); the
 * hubs of this world already do. After this, only the hubs renew host node Leases. Existing behaviour of the
 * world is unchanged for any test that does not call it.
 */
export function leaveNodeLeasesToHubs(world: YurtHubWorld): void {
  const kubelet = world.fleet.clusters[0]!.kubelet;
  if (!kubelet) throw new Error('leaveNodeLeasesToHubs: the cluster has no kubelet on this thread');
  if (!kubelet.stopNodeLeaseRenewals())
    throw new Error('leaveNodeLeasesToHubs: the kubelet renews no node Leases (not a real control plane?)');
}
