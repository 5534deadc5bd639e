/**
 * A reconcile world for end-to-end tests and the benchmark: one cluster — the built control plane with the
 * product installed (default) or the embedded local API — with the CRDs, the product namespace and the
 * cluster CA; dynalite with the state table and the cluster registered; the real reconcile handler wired to
 * both. No vitest import: dev/bench/reconcile.ts uses it too.
 */
import { randomUUID, webcrypto } from 'node:crypto';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { KubernetesObject } from '@kubernetes/client-node';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../../adapters/kubernetes/index.ts';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import type { ClusterAccess, StateTable } from '../../../adapters/state-table/index.ts';
import { createStateTable, registerCluster } from '../../../adapters/state-table/index.ts';
import type { KubeObject } from '../../../core/index.ts';
import { cachingKeyFactory, DEFAULT_NAMESPACE } from '../../../core/index.ts';
import type { LocalDynamo } from '../../../dev/local/dynamodb.ts';
import { ensureTable, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import type { LocalCluster, RequestRecord } from '../../../dev/local/kube-api/index.ts';
import { startLocalCluster } from '../../../dev/local/kube-api/index.ts';
import { createCertificateAuthority } from '../../../dev/local/pki.ts';
import { AuditRequestLog } from '../../../dev/local/real-cluster/audit-log.ts';
import { startRealHostCluster } from '../../../dev/local/real-cluster/control-plane.ts';
import { installProduct, PRODUCT_IDENTITIES } from '../../../dev/local/real-cluster/install.ts';
import type { ReconcileDeps, ReconcileResult } from '../../../functions/reconcile/handler.ts';
import { createReconcileHandler, reconcileDeps } from '../../../functions/reconcile/handler.ts';
import * as x509 from '../../../shared/x509.ts';
import { applyCrds, publishClusterCa } from '../../support/local-cluster.ts';
import { waitFor } from '../../support/wait.ts';

export const CLUSTER_ID = 'c1';
export const TABLE_NAME = 'pool-spirit-state';

/** A throwaway cluster CA made at test time (its key is never written anywhere). */
export async function generateClusterCaPem(): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=kubernetes',
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * 24 * 3600 * 1000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  return cert.toString('pem');
}

export interface CapturedMetric {
  name: string;
  value: number;
}

/** The reconciler's requests to the cluster, read after the fact (writes counted, "not even a read"). */
export interface ReconcileRequestLog {
  /** A position: every request the reconciler finished before the call is before it. */
  mark(): Promise<number>;
  since(mark: number): Promise<RequestRecord[]>;
  /** Writes (create/update/patch/delete), dry runs excluded. */
  writesSince(mark: number): Promise<RequestRecord[]>;
}

/**
 * Who serves the world's cluster: `real` (default), the built etcd, kube-apiserver, kube-controller-manager and
 * kube-scheduler with the product installed from infra/cluster, and the reconciler as the shipped identity
 * (its client certificate in group pool-spirit:reconciler, bound by the shipped RBAC), its requests read from
 * kube-apiserver's audit log; `local`, the embedded local API, for what only it gives (injected faults, its
 * RBAC usage record, the capture of its answers).
 */
export type ControlPlane = 'real' | 'local';

export interface ReconcileWorld {
  controlPlane: ControlPlane;
  /** The API server's URL. */
  url: string;
  /** The local API (control plane `local`): faults and its own request log. */
  local: LocalCluster | undefined;
  /** The reconciler's requests: the audit log (real) or the local API's request log (local). */
  requestLog: ReconcileRequestLog;
  dynamo: LocalDynamo;
  table: StateTable;
  deps: ReconcileDeps;
  /** Admin client of the test itself (not the reconciler's). */
  admin: RawObjectApi;
  clusterCaPem: string;
  /** Milliseconds added to the reconciler's clock (lease expiry tests). */
  clockOffsetMs: number;
  /** EMF metric documents the handler published. */
  metricsOut: Record<string, unknown>[];
  /** Write units the table reported, in order. */
  tableWrites: number[];
  /** Wraps every ClusterClient the handler builds (fault injection). */
  wrapClient?: (client: ClusterClient) => ClusterClient;
  invoke(
    pool: string,
    options?: {
      eventId?: string;
      via?: 'request' | 'notice';
      requestId?: string;
      time?: Date;
      /** The invocation's time left when it starts (the context's getRemainingTimeInMillis); 60 s unless set. */
      remainingMs?: number;
    },
  ): Promise<ReconcileResult>;
  reconcileRequestEvent(pool: string, eventId?: string, time?: Date): Record<string, unknown>;
  changeNoticeEvent(pool: string, eventId?: string, time?: Date): Record<string, unknown>;
  createNodePool(
    name: string,
    options?: { type?: 'Edge' | 'Cloud'; labels?: Record<string, string>; annotations?: Record<string, string> },
  ): Promise<KubeObject>;
  /**
   * Waits until the controllers are done with the pool's Deployment, then reconciles until a pass writes
   * nothing. On the real control plane their progress (the Deployment's status, its ReplicaSet, the pod's
   * scheduling) is news for a pass or two after a change; a pool that never settles is a self-triggered
   * loop, and fails here. (The local API has no controllers: its Deployment is done as written.)
   */
  settle(pool: string): Promise<void>;
  stop(): Promise<void>;
}

/** The cluster a world's reconciler reaches, and how. */
interface WorldCluster {
  url: string;
  local: LocalCluster | undefined;
  admin: RawObjectApi;
  clusterCaPem: string;
  access: ClusterAccess;
  requestLog: ReconcileRequestLog;
  stop(): Promise<void>;
}

async function applyManifest(admin: RawObjectApi, obj: KubernetesObject): Promise<void> {
  await admin.applyJson(obj, 'test-setup', true);
}

/** The embedded local API, anonymous admin access, the CRDs and the product namespace applied. */
async function startLocalWorldCluster(): Promise<WorldCluster> {
  const cluster = await startLocalCluster({ port: 0 });
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'admin', server: cluster.url, skipTLSVerify: true }, { name: 'admin' });
  const admin = RawObjectApi.fromKubeConfig(kc);
  await applyCrds(admin);
  await applyManifest(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEFAULT_NAMESPACE } });
  const clusterCaPem = await generateClusterCaPem();
  await publishClusterCa(admin, clusterCaPem);
  const log = cluster.requestLog;
  return {
    url: cluster.url,
    local: cluster,
    admin,
    clusterCaPem,
    access: { kind: 'url', url: cluster.url },
    requestLog: {
      mark: async () => log.mark(),
      since: async (mark) => log.since(mark),
      writesSince: async (mark) => log.writesSince(mark),
    },
    stop: () => cluster.stop(),
  };
}

/**
 * The built control plane with the product installed as an operator would (OpenYurt's NodePool CRD, then
 * infra/cluster), the reconciler reaching it as the shipped identity, and kube-apiserver's audit log as the
 * record of what that identity requested.
 */
async function startRealWorldCluster(components: string[], controllers: boolean): Promise<WorldCluster> {
  const ca = await createCertificateAuthority('reconcile-e2e-cluster-ca');
  const real = await startRealHostCluster({ name: 'reconcile-e2e', ca, auditLog: true, controllers });
  try {
    const admin = RawObjectApi.fromKubeConfig(real.kubeConfig);
    await applyCrds(admin);
    await installProduct(real.kubeConfig, components);
    await publishClusterCa(admin, ca.certPem);
    const kubeconfigPath = join(real.dir, 'reconciler.kubeconfig');
    await real.writeKubeconfig(kubeconfigPath, PRODUCT_IDENTITIES.reconciler);
    if (!real.auditLogPath) throw new Error('the control plane was started without its audit log');
    const audit = new AuditRequestLog(
      real.auditLogPath,
      (marker) => admin.requestJson(HttpMethod.GET, '/version', { query: { fence: marker } }),
      PRODUCT_IDENTITIES.reconciler.user,
    );
    return {
      url: real.url,
      local: undefined,
      admin,
      clusterCaPem: ca.certPem,
      access: { kind: 'kubeconfig-file', path: kubeconfigPath },
      requestLog: audit,
      stop: () => real.stop(),
    };
  } catch (err) {
    await real.stop();
    throw err;
  }
}

export async function startReconcileWorld(
  options: {
    controlPlane?: ControlPlane;
    /** Control plane `real`: opt-in components of infra/cluster installed with the product (paths from the repository root). */
    components?: string[];
    /**
     * Control plane `real`: start kube-controller-manager and kube-scheduler (default true). A test of the
     * reconcile's own bookkeeping (its lease) needs no Deployment rolled and starts in less CPU without them.
     */
    controllers?: boolean;
    logLevel?: 'SILENT' | 'INFO' | 'DEBUG';
    lockedWaitMs?: number;
  } = {},
): Promise<ReconcileWorld> {
  const controlPlane = options.controlPlane ?? 'real';
  const cluster =
    controlPlane === 'real'
      ? await startRealWorldCluster(options.components ?? [], options.controllers ?? true)
      : await startLocalWorldCluster();
  const dynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, TABLE_NAME);
  const tableWrites: number[] = [];
  const table = createStateTable({
    client: dynamo.client,
    tableName: TABLE_NAME,
    onWriteUnits: (u) => tableWrites.push(u),
  });
  await registerCluster(table, { id: CLUSTER_ID, access: cluster.access }, new Date());
  const { admin, clusterCaPem } = cluster;

  const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  // What the handler's dependencies read while the world is being built; the world is this same object.
  const early: Pick<ReconcileWorld, 'metricsOut' | 'clockOffsetMs' | 'wrapClient'> = {
    metricsOut: [],
    clockOffsetMs: 0,
  };
  const metrics = new Metrics({ namespace: 'PoolSpiritTest', serviceName: 'reconcile-test', logger: silent });
  // EMF lines go to the metrics' own console: capture them instead of printing.
  Object.assign(metrics, {
    console: { log: (line: string) => early.metricsOut.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const deps = reconcileDeps({
    table,
    clock: () => new Date(Date.now() + early.clockOffsetMs),
    logger: new Logger({ serviceName: 'reconcile-test', logLevel: options.logLevel ?? 'SILENT' }),
    metrics,
    // One key pair per certificate purpose: keeps tests fast; reuse logic is exercised all the same.
    keyFactory: cachingKeyFactory(),
    ...(options.lockedWaitMs !== undefined ? { lockedWaitMs: options.lockedWaitMs } : {}),
    clusterClient: (config) => {
      const made = createClusterClient(config, { retry: { initialDelayMs: 5, maxDelayMs: 50 } });
      // kube-apiserver allocates Service IPs; the local API does not, so its world stands in for the allocator.
      const client = cluster.local ? allocatingClusterIPs(made, admin) : made;
      return early.wrapClient ? early.wrapClient(client) : client;
    },
  });
  // No dead-letter sink: a terminal error reaches the test as a throw, so invoke answers a ReconcileResult.
  const handler = createReconcileHandler({ ...deps, deadLetters: undefined });

  // The bus's time is in whole seconds, as EventBridge writes it.
  const envelope = (eventId: string, time = new Date()) => ({
    version: '0',
    id: eventId,
    account: '000000000000',
    time: new Date(Math.floor(time.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    region: 'local',
    resources: [],
  });
  const world: ReconcileWorld = Object.assign(early, {
    controlPlane,
    url: cluster.url,
    local: cluster.local,
    requestLog: cluster.requestLog,
    dynamo,
    table,
    deps,
    admin,
    clusterCaPem,
    tableWrites,
    reconcileRequestEvent: (pool: string, eventId = randomUUID(), time?: Date) => ({
      ...envelope(eventId, time),
      source: 'pool-spirit.reconciler',
      'detail-type': 'Reconcile Request',
      detail: { clusterId: CLUSTER_ID, nodePool: pool, reason: 'test', requestedBy: 'e2e' },
    }),
    changeNoticeEvent: (pool: string, eventId = randomUUID(), time?: Date) => ({
      ...envelope(eventId, time),
      source: 'pool-spirit.forwarder',
      'detail-type': 'Cluster Change Notice',
      detail: {
        clusterId: CLUSTER_ID,
        kind: 'NodePool',
        name: pool,
        uid: 'uid',
        resourceVersion: '1',
        changeType: 'MODIFIED',
        poolName: pool,
        observedAt: new Date().toISOString(),
      },
    }),
    async invoke(pool: string, opts: Parameters<ReconcileWorld['invoke']>[1] = {}) {
      const event =
        opts.via === 'notice'
          ? world.changeNoticeEvent(pool, opts.eventId, opts.time)
          : world.reconcileRequestEvent(pool, opts.eventId, opts.time);
      return handler(event, lambdaContext(opts.requestId ?? randomUUID(), opts.remainingMs));
    },
    async createNodePool(
      name: string,
      o: { type?: 'Edge' | 'Cloud'; labels?: Record<string, string>; annotations?: Record<string, string> } = {},
    ) {
      const created = await admin.createJson({
        apiVersion: 'apps.openyurt.io/v1beta2',
        kind: 'NodePool',
        metadata: { name, labels: o.labels, annotations: o.annotations },
        spec: o.type ? { type: o.type } : {},
      } as KubernetesObject);
      return JSON.parse(JSON.stringify(created)) as KubeObject;
    },
    async settle(pool: string) {
      if (controlPlane === 'real' && options.controllers !== false)
        await waitFor(() => deploymentSettled(admin, pool), 20_000, `ps-${pool} settled`, 50);
      // A pass that wrote throws, so the wait's failure names the last one (waitFor reports the last error).
      await waitFor(
        async () => {
          const pass = await world.invoke(pool);
          if (pass.result !== 'unchanged') throw new Error(`the last pass: ${JSON.stringify(pass)}`);
          return true;
        },
        20_000,
        `a pass of ${pool} that writes nothing`,
        100,
      );
    },
    async stop() {
      await cluster.stop();
      await dynamo.stop();
    },
  });
  return world;
}

/** The pool's Deployment observed by its controller at its generation, with its pod created and scheduled or refused. */
async function deploymentSettled(admin: RawObjectApi, pool: string): Promise<boolean> {
  const d = await admin.readJson<KubeObject>({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `ps-${pool}`, namespace: DEFAULT_NAMESPACE },
  });
  const status = d.status as { observedGeneration?: number; updatedReplicas?: number } | undefined;
  const replicas = (d.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  if (status?.observedGeneration !== d.metadata.generation || status?.updatedReplicas !== replicas) return false;
  const pods = await admin.requestJson<{ items: KubeObject[] }>(
    HttpMethod.GET,
    `/api/v1/namespaces/${DEFAULT_NAMESPACE}/pods`,
    { query: { labelSelector: `poolspirit.io/pool=${pool}` } },
  );
  // The Deployment's own pods (its ReplicaSet's): a test may add pods of the pool's label by hand.
  const live = pods.items.filter(
    (p) => !p.metadata.deletionTimestamp && p.metadata.ownerReferences?.some((o) => o.kind === 'ReplicaSet'),
  );
  return (
    live.length === replicas &&
    live.every((p) =>
      ((p.status as { conditions?: Array<{ type: string }> } | undefined)?.conditions ?? []).some(
        (c) => c.type === 'PodScheduled',
      ),
    )
  );
}

export function lambdaContext(awsRequestId: string, remainingMs = 60_000): Context {
  const deadline = Date.now() + remainingMs;
  return {
    awsRequestId,
    functionName: 'reconcile',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:reconcile',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/reconcile',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

/**
 * The local API does not allocate Service ClusterIPs (kube-apiserver does): this stands in for the
 * allocator, giving a Service an IP right after its first apply, as a real cluster would in the response.
 * Its write is made with field manager `test-ip-allocator`, so tests can leave it out of write counts.
 */
export const IP_ALLOCATOR = 'test-ip-allocator';
let nextIp = 10;
function allocatingClusterIPs(client: ClusterClient, admin: RawObjectApi): ClusterClient {
  return {
    ...client,
    async apply(obj) {
      const after = await client.apply(obj);
      const spec = after.spec as { clusterIP?: string } | undefined;
      if (after.kind !== 'Service' || spec?.clusterIP) return after;
      const n = nextIp++;
      const ip = `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`;
      const patched = await admin.applyJson(
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: after.metadata.name, namespace: after.metadata.namespace },
          spec: { clusterIP: ip },
        } as KubernetesObject,
        IP_ALLOCATOR,
        true,
      );
      return JSON.parse(JSON.stringify(patched)) as KubeObject;
    },
  };
}
