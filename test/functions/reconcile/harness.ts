/**
 * A reconcile world for end-to-end tests and the benchmark: one local Kubernetes API with the CRDs, the
 * product namespace and a cluster CA; dynalite with the state table and the cluster registered; the real
 * reconcile handler wired to both. No vitest import: dev/bench/reconcile.ts uses it too.
 */
import { randomUUID, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import type { Context } from 'aws-lambda';
import { parseAllDocuments } from 'yaml';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../../adapters/kubernetes/index.ts';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import { createStateTable, registerCluster } from '../../../adapters/state-table/index.ts';
import type { KubeObject } from '../../../core/index.ts';
import { cachingKeyFactory, DEFAULT_NAMESPACE } from '../../../core/index.ts';
import type { LocalDynamo } from '../../../dev/local/dynamodb.ts';
import { ensureTable, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import type { LocalCluster } from '../../../dev/local/kube-api/index.ts';
import { startLocalCluster } from '../../../dev/local/kube-api/index.ts';
import type { ReconcileDeps, ReconcileResult } from '../../../functions/reconcile/handler.ts';
import { createReconcileHandler, reconcileDeps } from '../../../functions/reconcile/handler.ts';
import * as x509 from '../../../shared/x509.ts';

export const CLUSTER_ID = 'c1';
export const TABLE_NAME = 'pool-spirit-state';
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

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

export interface ReconcileWorld {
  cluster: LocalCluster;
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
  stop(): Promise<void>;
}

async function applyManifest(admin: RawObjectApi, obj: KubernetesObject): Promise<void> {
  await admin.applyJson(obj, 'test-setup', true);
}

export async function startReconcileWorld(
  options: { logLevel?: 'SILENT' | 'INFO' | 'DEBUG'; lockedWaitMs?: number } = {},
): Promise<ReconcileWorld> {
  const cluster = await startLocalCluster({ port: 0 });
  const dynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, TABLE_NAME);
  const tableWrites: number[] = [];
  const table = createStateTable({
    client: dynamo.client,
    tableName: TABLE_NAME,
    onWriteUnits: (u) => tableWrites.push(u),
  });
  await registerCluster(table, { id: CLUSTER_ID, access: { kind: 'url', url: cluster.url } }, new Date());

  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'admin', server: cluster.url, skipTLSVerify: true }, { name: 'admin' });
  const admin = RawObjectApi.fromKubeConfig(kc);
  for (const file of ['infra/crds/nodepool.yaml', 'infra/crds/poolspirit.yaml']) {
    for (const doc of parseAllDocuments(await readFile(repoRoot + file, 'utf8'))) {
      const obj = doc.toJSON() as KubernetesObject | null;
      if (obj) await applyManifest(admin, obj);
    }
  }
  await applyManifest(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEFAULT_NAMESPACE } });
  const clusterCaPem = await generateClusterCaPem();
  await applyManifest(admin, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt', namespace: 'kube-system' },
    data: { 'ca.crt': clusterCaPem },
  } as KubernetesObject);

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
      const client = allocatingClusterIPs(
        createClusterClient(config, { retry: { initialDelayMs: 5, maxDelayMs: 50 } }),
        admin,
      );
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
    cluster,
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
    async stop() {
      await cluster.stop();
      await dynamo.stop();
    },
  });
  return world;
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
