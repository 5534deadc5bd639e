/**
 * A cluster where the functions run with the reconciler's RBAC and nothing else: the local real host control
 * plane — the built kube-apiserver with Node,RBAC and NodeRestriction, kube-controller-manager (garbage
 * collector, Deployments) and kube-scheduler — with infra/cluster installed by an admin (system:masters) the
 * way an operator would, and the five functions reaching it through the registry with a kubeconfig whose
 * client certificate is a member of group `pool-spirit:reconciler` only. The sim kubelet and the agent
 * stand-in play the nodes and the pool's agent, so they run as the admin: their rights are not the
 * reconciler's to hold. kube-apiserver's audit log says what it decided about the reconciler (rbac-judge.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { HttpMethod, KubeConfig, type KubernetesObject, PatchStrategy } from '@kubernetes/client-node';
import type { ClusterConnection } from '../../../../adapters/kubernetes/http/index.ts';
import { createClusterClient } from '../../../../adapters/kubernetes/index.ts';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { createStateTable, registerCluster, type StateTable } from '../../../../adapters/state-table/index.ts';
import { cachingKeyFactory, type KubeObject } from '../../../../core/index.ts';
import { RECONCILER_GROUP } from '../../../../core/security/index.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../../dev/local/dynamodb.ts';
import { localObservability } from '../../../../dev/local/fleet/observability.ts';
import { edgeNode } from '../../../../dev/local/fleet/seed.ts';
import { kubeconfigYaml } from '../../../../dev/local/kube-api/index.ts';
import { simulateAgent } from '../../../../dev/local/kubelet/agent-sim.ts';
import { SimKubelet } from '../../../../dev/local/kubelet/sim-kubelet.ts';
import { type CertAndKey, createCertificateAuthority, issueClientCertificate } from '../../../../dev/local/pki.ts';
import { AuditRequestLog } from '../../../../dev/local/real-cluster/audit-log.ts';
import { startRealHostCluster } from '../../../../dev/local/real-cluster/control-plane.ts';
import { AUDIT_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../../../events/index.ts';
import { type AuditResult, createAuditHandler } from '../../../../functions/audit/handler.ts';
import { type CloudEventResult, createCloudEventsHandler } from '../../../../functions/cloud-events/handler.ts';
import { createProbeHandler, type ProbeResult } from '../../../../functions/probe/handler.ts';
import {
  createReconcileHandler,
  type ReconcileResult,
  reconcileDeps,
} from '../../../../functions/reconcile/handler.ts';
import { createRolloutHandler, type RolloutResult } from '../../../../functions/rollout/handler.ts';
import { lambdaContext } from '../../../functions/reconcile/harness.ts';
import { applyCrds, publishClusterCa } from '../../../support/local-cluster.ts';
import { kustomize, kustomizeOverlay } from '../../manifests.ts';
import { RbacJudge } from './rbac-judge.ts';

export const CLUSTER_ID = 'rbac-c1';
/** The functions' identity in this test: a member of the reconciler group, with no other rights. */
export const RECONCILER_USER = 'pool-spirit-reconciler-test';
const TABLE_NAME = 'rbac-test-state';

export interface RbacWorld {
  /** kube-apiserver's decisions about the reconciler's requests: denials, rule usage, RBAC writes. */
  authz: RbacJudge;
  /** The test's own client, as system:masters. */
  admin: RawObjectApi;
  table: StateTable;
  /** infra/cluster as `kubectl kustomize` builds it, with the components asked for (what was installed, Deployments aside). */
  installed: KubeObject[];
  /** PutEvents entries the functions sent (reconcile requests from the audit and cloud-events). */
  sentEvents: PutEventsRequestEntry[];
  /** What the sim kubelet could not do (shown when a pool never becomes Available). */
  kubeletErrors: string[];
  reconcile(pool: string): Promise<ReconcileResult>;
  audit(): Promise<AuditResult>;
  probe(): Promise<ProbeResult>;
  rollout(command: Record<string, unknown>): Promise<RolloutResult>;
  cloudEvent(event: Record<string, unknown>): Promise<CloudEventResult>;
  /** Reads an object as the admin; undefined when it does not exist. */
  read(apiVersion: string, kind: string, name: string, namespace?: string): Promise<KubeObject | undefined>;
  /** Registers a Ready edge node of `pool` backed by EC2 instance `instanceId` (cloud-events finds nodes by it), as its kubelet would. */
  addEc2Node(name: string, pool: string, instanceId: string): Promise<void>;
  /** Server-side apply as the admin (an operator's or a controller's change). */
  applyAsAdmin(obj: Record<string, unknown>): Promise<KubeObject>;
  /**
   * What kube-apiserver's authorizer answers now for the reconciler (a SubjectAccessReview sent by the
   * admin, so it is not among the reconciler's requests). A changed role takes effect once the
   * apiserver's RBAC informer has seen it, a moment after the write: a test waits on this for it.
   */
  reconcilerMay(attributes: {
    verb: string;
    group: string;
    resource: string;
    name?: string;
    namespace?: string;
  }): Promise<boolean>;
  /**
   * A client speaking as `identity`: 'reconciler' is the functions' certificate (the test user in group
   * pool-spirit:reconciler only); otherwise a client certificate for that user and those groups, issued by
   * the cluster CA (how a ServiceAccount's token would authenticate: user `system:serviceaccount:<ns>:<sa>`,
   * groups `system:serviceaccounts` and `system:serviceaccounts:<ns>`).
   */
  as(identity: 'reconciler' | { user: string; groups: string[] }): Promise<Identity>;
  stop(): Promise<void>;
}

export interface RawResponse {
  status: number;
  json: any;
  text: string;
}

export interface Identity {
  kubeConfig: KubeConfig;
  /** One HTTPS request; the answer whatever its status. A body is JSON unless `contentType` says otherwise. */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse>;
}

/** The Roles and ClusterRoles bound to the reconciler group by infra/cluster, as `authz.report` takes them. */
export function reconcilerRoles(
  installed: KubeObject[],
): Array<{ kind: 'ClusterRole' | 'Role'; name: string; namespace?: string }> {
  const out = new Map<string, { kind: 'ClusterRole' | 'Role'; name: string; namespace?: string }>();
  for (const binding of installed.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')) {
    const subjects = (binding.subjects ?? []) as Array<{ kind: string; name: string }>;
    if (!subjects.some((s) => s.kind === 'Group' && s.name === RECONCILER_GROUP)) continue;
    const ref = binding.roleRef as { kind: 'ClusterRole' | 'Role'; name: string };
    const role =
      ref.kind === 'Role'
        ? { kind: ref.kind, name: ref.name, namespace: binding.metadata.namespace }
        : { kind: ref.kind, name: ref.name };
    out.set(JSON.stringify(role), role);
  }
  return [...out.values()];
}

/**
 * `components`: opt-in components of infra/cluster installed with it, as an operator's overlay (paths from
 * the repository root).
 */
export async function startRbacWorld(opts: { components?: string[] } = {}): Promise<RbacWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-rbac-'));
  const ca = await createCertificateAuthority('rbac-test-cluster-ca');
  const [adminCert, reconcilerCert] = await Promise.all([
    issueClientCertificate(ca, { user: 'rbac-test-admin', groups: ['system:masters'] }),
    issueClientCertificate(ca, { user: RECONCILER_USER, groups: [RECONCILER_GROUP] }),
  ]);
  const real = await startRealHostCluster({ name: 'rbac-real', ca, auditLog: true });
  const cluster = {
    url: real.url,
    writeKubeconfig: (path: string, cert: CertAndKey) =>
      writeFile(path, kubeconfigYaml('rbac-test', real.url, { caPem: ca.certPem, identity: cert }), { mode: 0o600 }),
  };
  const identityOf = (cert: CertAndKey): Identity => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigYaml('rbac-test', cluster.url, { caPem: ca.certPem, identity: cert }));
    return {
      kubeConfig,
      request: (method, path, body, contentType = 'application/json') =>
        new Promise((resolve, reject) => {
          const text = body === undefined ? undefined : JSON.stringify(body);
          const req = httpsRequest(
            new URL(cluster.url + path),
            {
              method,
              ca: ca.certPem,
              cert: cert.certPem,
              key: cert.keyPem,
              agent: false,
              headers:
                text === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(text) },
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
        }),
    };
  };
  const identities = new Map<string, Promise<Identity>>();
  const adminPath = join(dir, 'admin.kubeconfig');
  const reconcilerPath = join(dir, 'reconciler.kubeconfig');
  await cluster.writeKubeconfig(adminPath, adminCert);
  await cluster.writeKubeconfig(reconcilerPath, reconcilerCert);
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(adminPath);
  const admin = RawObjectApi.fromKubeConfig(adminKc);

  // What an operator installs: the NodePool CRD (OpenYurt's), then infra/cluster without its workloads.
  await applyCrds(admin);
  const built = opts.components?.length
    ? await kustomizeOverlay(['infra/cluster'], opts.components)
    : (await kustomize('infra/cluster')).objects;
  const installed = built.filter((o) => o.kind !== 'Deployment');
  for (const obj of installed) await admin.applyJson(obj as KubernetesObject, 'rbac-test-install', true);
  await publishClusterCa(admin, ca.certPem);

  const dynamo: LocalDynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, TABLE_NAME);
  const table = createStateTable({ client: dynamo.client, tableName: TABLE_NAME });
  await registerCluster(
    table,
    { id: CLUSTER_ID, access: { kind: 'kubeconfig-file', path: reconcilerPath } },
    new Date(),
  );

  const kubeletErrors: string[] = [];
  const kubelet = new SimKubelet({
    kubeConfig: adminKc,
    controlPlane: 'real',
    readyDelayMs: 20,
    onPodReady: async (pod) => void (await simulateAgent(adminKc, pod, { simulateLeader: true })),
    onError: (err) => kubeletErrors.push((err as { body?: { message?: string } }).body?.message ?? err.message),
  });
  await kubelet.start();

  const sentEvents: PutEventsRequestEntry[] = [];
  const events = {
    putEvents: async (entries: PutEventsRequestEntry[]) => {
      sentEvents.push(...entries);
      return entries.map(() => ({ EventId: randomUUID() }));
    },
  };
  const observability = (service: string) => ({
    ...localObservability(service),
    logger: new Logger({ serviceName: service, logLevel: 'SILENT' }),
  });
  const keyFactory = cachingKeyFactory();
  // Fast retries: a refused request is not retried at all, and nothing here is transient.
  const clusterClient = (connection: ClusterConnection) =>
    createClusterClient(connection, { retry: { initialDelayMs: 5, maxDelayMs: 50 } });

  const reconcileHandler = createReconcileHandler({
    ...reconcileDeps({ table, keyFactory, clusterClient, ...observability('rbac-reconcile') }),
    deadLetters: undefined,
  });
  const auditHandler = createAuditHandler({
    table,
    events,
    eventBusName: 'rbac-test',
    keyFactory,
    clusterClient,
    ...observability('rbac-audit'),
  });
  const probeHandler = createProbeHandler({ table, clusterClient, ...observability('rbac-probe') });
  const rolloutHandler = createRolloutHandler({ table, ...observability('rbac-rollout') });
  const cloudEventsHandler = createCloudEventsHandler({
    table,
    events,
    eventBusName: 'rbac-test',
    clusterClient,
    ...observability('rbac-cloud-events'),
  });
  const context = () => lambdaContext(randomUUID());
  const envelope = () => ({
    version: '0',
    id: randomUUID(),
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'local',
    resources: [],
  });

  if (!real.auditLogPath) throw new Error('the control plane was started without its audit log');
  const log = new AuditRequestLog(
    real.auditLogPath,
    (marker) => admin.requestJson(HttpMethod.GET, '/version', { query: { fence: marker } }),
    RECONCILER_USER,
  );

  return {
    authz: new RbacJudge(log, admin, reconcilerRoles(installed)),
    admin,
    table,
    installed,
    sentEvents,
    kubeletErrors,
    reconcile: (pool) =>
      reconcileHandler(
        {
          ...envelope(),
          source: RECONCILER_SOURCE,
          'detail-type': 'Reconcile Request',
          detail: { clusterId: CLUSTER_ID, nodePool: pool, reason: 'rbac-test', requestedBy: 'e2e' },
        },
        context(),
      ),
    audit: () =>
      auditHandler(
        {
          ...envelope(),
          source: RECONCILER_SOURCE,
          'detail-type': AUDIT_REQUEST_DETAIL_TYPE,
          detail: {
            clusterId: CLUSTER_ID,
            runId: randomUUID(),
            requestedAt: new Date().toISOString(),
            requestedBy: 'rbac-test',
          },
        },
        context(),
      ),
    async probe() {
      const result = await probeHandler({ clusterId: CLUSTER_ID }, context());
      if (result.kind !== 'cluster') throw new Error(`a probe of ${CLUSTER_ID} answered with a ${result.kind}`);
      return result;
    },
    rollout: (command) => rolloutHandler(command, context()),
    cloudEvent: (event) => cloudEventsHandler(event, context()) as Promise<CloudEventResult>,
    async read(apiVersion, kind, name, namespace) {
      try {
        return JSON.parse(
          JSON.stringify(await admin.read({ apiVersion, kind, metadata: { name, namespace } })),
        ) as KubeObject;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
    },
    async addEc2Node(name, pool, instanceId) {
      const { status, ...node } = edgeNode(name, pool);
      await admin.applyJson(
        { ...node, spec: { providerID: `aws:///eu-west-1a/${instanceId}` } },
        'rbac-test-kubelet',
        true,
      );
      // Status is the kubelet's to write, through its subresource (an apply of the object drops it).
      await admin.requestJson(HttpMethod.PATCH, `/api/v1/nodes/${name}/status`, {
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name }, status },
        contentType: PatchStrategy.ServerSideApply,
        query: { fieldManager: 'rbac-test-kubelet', force: 'true' },
      });
    },
    async applyAsAdmin(obj) {
      return JSON.parse(
        JSON.stringify(await admin.applyJson(obj as KubernetesObject, 'rbac-test-operator', true)),
      ) as KubeObject;
    },
    async reconcilerMay(attributes) {
      const review = await admin.requestJson<{ status?: { allowed?: boolean } }>(
        HttpMethod.POST,
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: { user: RECONCILER_USER, groups: [RECONCILER_GROUP], resourceAttributes: attributes },
          },
        },
      );
      return review.status?.allowed === true;
    },
    as(identity) {
      if (identity === 'reconciler') return Promise.resolve(identityOf(reconcilerCert));
      const key = JSON.stringify(identity);
      let id = identities.get(key);
      if (!id) {
        id = issueClientCertificate(ca, identity).then(identityOf);
        identities.set(key, id);
      }
      return id;
    },
    async stop() {
      await kubelet.stop();
      await real.stop();
      await dynamo.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
