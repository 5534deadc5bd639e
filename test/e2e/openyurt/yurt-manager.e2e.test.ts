/**
 * OpenYurt's own yurt-manager v1.5.1 (built from the pinned module) against the real local control plane, as
 * its chart deploys it (dev/local/openyurt): its webhooks reached by the apiserver at loopback URLs, its
 * controllers nodepool, yurtcoordinatorcert, delegatelease, podbinding and csrapprover acting as their own
 * ServiceAccounts. One cluster and one yurt-manager for the file; the CRDs are installed as the chart ships
 * them (conversion by the yurt-manager-webhook-service Service) and the harness points them at the URL.
 */

import { webcrypto, X509Certificate } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { ApiException, HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { openYurtCrds } from '../../../dev/local/fleet/seed.ts';
import {
  DEFAULT_CONTROLLERS,
  MUTATING_WEBHOOK_CONFIGURATION,
  type RunningYurtManager,
  startYurtManager,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from '../../../dev/local/openyurt/yurt-manager.ts';
import { createCertificateAuthority, issueClientCertificate } from '../../../dev/local/pki.ts';
import { type RealHostCluster, startRealHostCluster } from '../../../dev/local/real-cluster/control-plane.ts';
import * as x509 from '../../../shared/x509.ts';
import { describeFindings, kubeconfigSecrets, SecretScanner, secretObjectSecrets } from '../../support/secret-scan.ts';
import { waitFor } from '../../support/wait.ts';
import type { Condition, LeaseJson, Meta, NodeJson, PodJson, Toleration } from './kube-json.ts';

interface NodePoolJson {
  apiVersion: string;
  metadata: Meta;
  spec: { type?: string };
  status?: { nodes?: string[] };
}
interface SecretJson {
  metadata: Meta;
  data?: Record<string, string>;
}
interface CsrJson {
  metadata: Meta;
  status?: { conditions?: Condition[] };
}
interface CrdJson {
  spec: { conversion?: { webhook?: { clientConfig?: { url?: string; service?: unknown; caBundle?: string } } } };
}
interface WebhookConfigurationJson {
  metadata: Meta;
  webhooks: Array<{ name: string; failurePolicy?: string; clientConfig: { url?: string; service?: unknown } }>;
}

const NS = 'kube-system';
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const NODEPOOLS_V1BETA1 = '/apis/apps.openyurt.io/v1beta1/nodepools';
const POOL_TYPE_LABEL = 'nodepool.openyurt.io/type';
const NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';
const DESIRED_NODEPOOL_LABEL = 'apps.openyurt.io/desired-nodepool';
const HUB_CERTS = 'yurt-coordinator-yurthub-certs';
const CA_CERTS = 'yurt-coordinator-ca-certs';
const HUB_CLIENT = 'yurt-coordinator-yurthub-client';
const MERGE = 'application/merge-patch+json';
const NODE = 'edge-1';

const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
const microTime = () => new Date().toISOString().replace('Z', '000Z');

function kubeConfigOf(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}

/** The rejection a call ended with (ApiException), or a failure if it succeeded. */
async function rejection(call: Promise<unknown>): Promise<ApiException<unknown>> {
  const outcome = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(outcome instanceof ApiException)) throw new Error(`expected an API rejection, got ${String(outcome)}`);
  return outcome;
}

/** Who wrote which keys of a Secret's data: `manager operation [subresource]: keys`. */
function dataWriters(secret: SecretJson): string[] {
  return (secret.metadata.managedFields ?? [])
    .filter((f) => f.fieldsV1?.['f:data'])
    .map(
      (f) =>
        `${f.manager} ${f.operation}${f.subresource ? ` ${f.subresource}` : ''}: ${Object.keys(
          f.fieldsV1?.['f:data'] ?? {},
        )
          .map((k) => k.replace(/^f:/, ''))
          .sort()
          .join(', ')}`,
    );
}

function ownerOf(secret: SecretJson, key: string): string[] {
  return (secret.metadata.managedFields ?? [])
    .filter((f) => f.fieldsV1?.['f:data']?.[`f:${key}`] !== undefined)
    .map((f) => `${f.manager}/${f.operation}`);
}

async function csrPem(commonName: string, organization: string): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [commonName] }, { O: [organization] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return csr.toString('pem');
}

describe('OpenYurt yurt-manager v1.5.1 beside the real control plane', () => {
  let cluster: RealHostCluster;
  let ym: RunningYurtManager;
  let admin: RawObjectApi;
  let node: RawObjectApi;
  const facts: Record<string, unknown> = {};

  beforeAll(async () => {
    const started = performance.now();
    cluster = await startRealHostCluster({ name: 'ym-e2e', ca: await createCertificateAuthority('ym-e2e-ca') });
    admin = RawObjectApi.fromKubeConfig(cluster.kubeConfig);
    // OpenYurt's CRDs exactly as its chart ships them (what `local up --openyurt v1.5.1` installs).
    for (const crd of await openYurtCrds('v1.5.1')) await admin.createJson(crd);
    ym = await startYurtManager({ cluster });
    facts.clusterAndYurtManagerMs = Math.round(performance.now() - started);
    facts.yurtManagerReadyMs = ym.readyMs;
    node = RawObjectApi.fromKubeConfig(
      kubeConfigOf(await cluster.kubeconfigFor({ user: `system:node:${NODE}`, groups: ['system:nodes'] })),
    );
  }, 120_000);

  afterAll(async () => {
    if (ym) facts.errorLogLines = await ym.errorLines();
    console.info(`yurt-manager e2e facts:\n${JSON.stringify(facts, null, 2)}`);
    await ym?.stop();
    await cluster?.stop();
  });

  it('runs as its own process in a network namespace whose only interface is loopback, as the chart configures it', async () => {
    expect(readlinkSync(`/proc/${ym.pid}/ns/net`)).not.toBe(readlinkSync('/proc/self/ns/net'));
    const interfaces = readFileSync(`/proc/${ym.pid}/net/dev`, 'utf8')
      .split('\n')
      .slice(2)
      .map((l) => l.split(':')[0]!.trim())
      .filter(Boolean);
    expect(interfaces).toEqual(['lo']);
    const cmdline = readFileSync(`/proc/${ym.pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline[0]).toMatch(/yurt-manager$/);
    expect(cmdline).toContain(`--controllers=${DEFAULT_CONTROLLERS['v1.5.1'].join(',')}`);
    expect(cmdline).toContain('--leader-elect-resource-name=cloud-yurt-manager');
    const environ = readFileSync(`/proc/${ym.pid}/environ`, 'utf8').split('\0').filter(Boolean);
    expect(environ).toContain('WEBHOOK_HOST=127.0.0.1');
    expect(environ).toContain(`WEBHOOK_PORT=${ym.ports.webhook}`);
    // Its controllers' identities come from the chart.
    await admin.requestJson(
      HttpMethod.GET,
      `/api/v1/namespaces/${NS}/serviceaccounts/yurt-manager-yurt-coordinator-cert-controller`,
    );
  });

  it('keeps in its webhook configurations only the webhooks it serves, each at https://127.0.0.1:<port> with its CA', async () => {
    const get = (kind: string, name: string) =>
      admin.requestJson<WebhookConfigurationJson>(
        HttpMethod.GET,
        `/apis/admissionregistration.k8s.io/v1/${kind}/${name}`,
      );
    const mutating = await get('mutatingwebhookconfigurations', MUTATING_WEBHOOK_CONFIGURATION);
    const validating = await get('validatingwebhookconfigurations', VALIDATING_WEBHOOK_CONFIGURATION);
    const summary = (c: WebhookConfigurationJson) =>
      c.webhooks.map(
        (w) => `${w.name} ${w.failurePolicy} ${w.clientConfig.url?.replace(String(ym.ports.webhook), 'PORT')}`,
      );
    facts.mutatingWebhooks = summary(mutating);
    facts.validatingWebhooks = summary(validating);
    expect(mutating.webhooks.map((w) => w.name).sort()).toEqual([
      'm.v1beta1.nodepool.kb.io',
      'mutate.core.v1.node.openyurt.io',
      'mutate.core.v1.pod.openyurt.io',
    ]);
    expect(validating.webhooks.map((w) => w.name).sort()).toEqual([
      'v.v1beta1.nodepool.kb.io',
      'validate.core.v1.node.openyurt.io',
    ]);
    for (const w of [...mutating.webhooks, ...validating.webhooks]) {
      expect(w.clientConfig.service).toBeUndefined();
      expect(w.clientConfig.url).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${ym.ports.webhook}/(mutate|validate)-`));
    }
    expect(mutating.metadata.annotations?.['yurt-manager-template']).toBeDefined();
    // The one change to OpenYurt's CRD: its conversion Service became a loopback URL; yurt-manager filled the CA.
    const crd = await admin.requestJson<CrdJson>(
      HttpMethod.GET,
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.apps.openyurt.io',
    );
    const clientConfig = crd.spec.conversion?.webhook?.clientConfig;
    expect(clientConfig?.service).toBeUndefined();
    expect(clientConfig?.url).toBe(`https://127.0.0.1:${ym.ports.webhook}/convert`);
    expect(b64(clientConfig?.caBundle ?? '')).toBe(ym.webhookCaPem);
  });

  it('NodePool: defaulted and validated by its webhooks, and read at v1alpha1 through its conversion webhook', async () => {
    const created = await admin.requestJson<NodePoolJson>(HttpMethod.POST, NODEPOOLS_V1BETA1, {
      body: {
        apiVersion: 'apps.openyurt.io/v1beta1',
        kind: 'NodePool',
        metadata: { name: 'hz' },
        spec: { type: 'Edge' },
      },
    });
    expect(created.metadata.labels?.[POOL_TYPE_LABEL]).toBe('edge');
    const cloud = await admin.requestJson<NodePoolJson>(HttpMethod.POST, NODEPOOLS_V1BETA1, {
      body: {
        apiVersion: 'apps.openyurt.io/v1beta1',
        kind: 'NodePool',
        metadata: { name: 'cloud' },
        spec: { type: 'Cloud' },
      },
    });
    expect(cloud.metadata.labels?.[POOL_TYPE_LABEL]).toBe('cloud');
    // The validating webhook: a pool's type cannot change.
    const refused = await rejection(
      admin.requestJson(HttpMethod.PATCH, `${NODEPOOLS_V1BETA1}/hz`, {
        body: { spec: { type: 'Cloud' } },
        contentType: MERGE,
      }),
    );
    expect(refused.code).toBe(403);
    expect(JSON.stringify(refused.body)).toContain("pool type can't be changed");
    // v1alpha1 is served, not stored: only the conversion webhook can answer this.
    const old = await admin.requestJson<NodePoolJson>(HttpMethod.GET, '/apis/apps.openyurt.io/v1alpha1/nodepools/hz');
    expect(old.apiVersion).toBe('apps.openyurt.io/v1alpha1');
    expect(old.spec.type).toBe('Edge');
    const list = await admin.requestJson<{ items: NodePoolJson[] }>(
      HttpMethod.GET,
      '/apis/apps.openyurt.io/v1alpha1/nodepools',
    );
    expect(list.items.map((p) => p.metadata.name).sort()).toEqual(['cloud', 'hz']);
  });

  it('Node: the desired pool becomes its pool label (node webhook), the label cannot change, and the nodepool controller lists it', async () => {
    // The Node webhook reads pools from yurt-manager's informer, a moment behind the apiserver: under load it
    // refuses a node of a pool created just before ("NodePool … not found"), as a registering kubelet would see
    // it, and the node is created again. Any other refusal fails the test when the wait runs out, naming it.
    const created = await waitFor(
      () =>
        admin.requestJson<NodeJson>(HttpMethod.POST, '/api/v1/nodes', {
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: { name: NODE, labels: { [DESIRED_NODEPOOL_LABEL]: 'hz' } },
          },
        }),
      15_000,
      "yurt-manager's Node webhook to know NodePool hz",
      200,
    );
    expect(created.metadata.labels?.[NODEPOOL_LABEL]).toBe('hz');
    const refused = await rejection(
      admin.requestJson(HttpMethod.PATCH, `/api/v1/nodes/${NODE}`, {
        body: { metadata: { labels: { [NODEPOOL_LABEL]: 'cloud' } } },
        contentType: MERGE,
      }),
    );
    expect(JSON.stringify(refused.body)).toContain('apps.openyurt.io/nodepool can not be changed');
    const pool = await waitFor(
      async () => {
        const p = await admin.requestJson<NodePoolJson>(HttpMethod.GET, `${NODEPOOLS_V1BETA1}/hz`);
        return p.status?.nodes?.includes(NODE) ? p : undefined;
      },
      15_000,
      `NodePool hz's status to list ${NODE} (nodepool controller)`,
    );
    expect(pool.status?.nodes).toEqual([NODE]);
  });

  it('yurtcoordinatorcert wrote yurt-coordinator-yurthub-certs at start: its CA and a yurthub client pair that CA signed', async () => {
    const hub = await admin.requestJson<SecretJson>(HttpMethod.GET, `${SECRETS}/${HUB_CERTS}`);
    const ca = await admin.requestJson<SecretJson>(HttpMethod.GET, `${SECRETS}/${CA_CERTS}`);
    expect(Object.keys(hub.data ?? {}).sort()).toEqual(['ca.crt', `${HUB_CLIENT}.crt`, `${HUB_CLIENT}.key`]);
    expect(hub.data?.['ca.crt']).toBe(ca.data?.['ca.crt']);
    const caCert = new X509Certificate(b64(hub.data!['ca.crt']!));
    const client = new X509Certificate(b64(hub.data![`${HUB_CLIENT}.crt`]!));
    expect(caCert.subject).toContain('CN=openyurt:yurt-coordinator');
    expect(client.subject).toContain('CN=cluster-admin');
    expect(client.subject).toContain('O=system:masters');
    expect(client.checkIssued(caCert) && client.verify(caCert.publicKey)).toBe(true);
    facts.hubCertsWritersAtStart = dataWriters(hub);
    const managers = new Set((hub.metadata.managedFields ?? []).map((f) => `${f.manager}/${f.operation}`));
    facts.hubCertsManagers = [...managers];
    expect(ownerOf(hub, 'ca.crt')).toEqual(['yurt-manager/Update']);
    expect(ownerOf(hub, `${HUB_CLIENT}.crt`)).toEqual(['yurt-manager/Update']);
  });

  it('csrapprover approves a client CSR of organisation openyurt:yurt-coordinator, and no other', async () => {
    const csr = async (name: string, organization: string) =>
      admin.requestJson(HttpMethod.POST, '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name },
          spec: {
            request: Buffer.from(await csrPem(`${name}-cn`, organization)).toString('base64'),
            signerName: 'kubernetes.io/kube-apiserver-client',
            usages: ['digital signature', 'key encipherment', 'client auth'],
          },
        },
      });
    await csr('not-openyurt', 'pool-spirit:hub');
    await csr('coordinator-client', 'openyurt:yurt-coordinator');
    const approved = await waitFor(
      async () => {
        const c = await admin.requestJson<CsrJson>(
          HttpMethod.GET,
          '/apis/certificates.k8s.io/v1/certificatesigningrequests/coordinator-client',
        );
        return c.status?.conditions?.find((x) => x.type === 'Approved') ? c : undefined;
      },
      15_000,
      'CSR coordinator-client approved by yurt-manager',
    );
    expect(approved.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Approved', status: 'True', reason: 'AutoApproved' }),
    );
    facts.csrApprovalMessage = approved.status?.conditions?.[0]?.message;
    await waitFor(
      async () => (await ym.currentLog()).includes('csr(not-openyurt) is not yurt-csr'),
      15_000,
      'yurt-manager to pass over CSR not-openyurt',
    );
    const other = await admin.requestJson<CsrJson>(
      HttpMethod.GET,
      '/apis/certificates.k8s.io/v1/certificatesigningrequests/not-openyurt',
    );
    expect(other.status?.conditions ?? []).toEqual([]);
  });

  it('podbinding: a Running pod on a node bound by annotation gets the not-ready/unreachable tolerations without a time limit, and 300 s when unbound', async () => {
    const podPath = '/api/v1/namespaces/default/pods';
    // The ServiceAccount admission needs the default ServiceAccount, which the controller-manager creates.
    await waitFor(
      () =>
        admin.requestJson(HttpMethod.POST, podPath, {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'bound', namespace: 'default' },
            spec: {
              nodeName: NODE,
              automountServiceAccountToken: false,
              containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
            },
          },
        }),
      15_000,
      'pod bound created',
    );
    // Running, as its node's kubelet reports it (the Node authorizer and NodeRestriction judge the write).
    await waitFor(
      async () => {
        const pod = await admin.requestJson<PodJson>(HttpMethod.GET, `${podPath}/bound`);
        const now = new Date().toISOString();
        return node.requestJson(HttpMethod.PUT, `${podPath}/bound/status`, {
          body: {
            ...pod,
            status: {
              phase: 'Running',
              startTime: now,
              conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
            },
          },
        });
      },
      15_000,
      `pod bound Running, written by system:node:${NODE}`,
    );
    const tolerations = async () =>
      (await admin.requestJson<PodJson>(HttpMethod.GET, `${podPath}/bound`)).spec.tolerations ?? [];
    const byKey = (ts: Toleration[], key: string) => ts.find((t) => t.key === key && t.effect === 'NoExecute');
    // The apiserver's DefaultTolerationSeconds admission already gave it 300 s.
    expect(byKey(await tolerations(), 'node.kubernetes.io/unreachable')?.tolerationSeconds).toBe(300);
    // podbinding reacts to Node events and reads pods from its cache: each poll touches the node, so a cache
    // that had not yet seen the pod Running gets another event.
    const touchNode = (annotations: Record<string, string | null>) =>
      admin.requestJson(HttpMethod.PATCH, `/api/v1/nodes/${NODE}`, {
        body: { metadata: { annotations: { ...annotations, 'e2e.test/touched': String(Date.now()) } } },
        contentType: MERGE,
      });
    const bound = await waitFor(
      async () => {
        await touchNode({ 'apps.openyurt.io/binding': 'true' });
        const ts = await tolerations();
        const notReady = byKey(ts, 'node.kubernetes.io/not-ready');
        const unreachable = byKey(ts, 'node.kubernetes.io/unreachable');
        return notReady &&
          unreachable &&
          notReady.tolerationSeconds === undefined &&
          unreachable.tolerationSeconds === undefined
          ? ts
          : undefined;
      },
      15_000,
      'podbinding to drop tolerationSeconds on a bound node',
      250,
    );
    expect(bound.filter((t) => t.effect === 'NoExecute')).toEqual([
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    ]);
    const pod = await admin.requestJson<PodJson>(HttpMethod.GET, `${podPath}/bound`);
    facts.podWriters = (pod.metadata.managedFields ?? []).map(
      (f) => `${f.manager}/${f.operation}${f.subresource ? `/${f.subresource}` : ''}`,
    );
    await waitFor(
      async () => {
        await touchNode({ 'apps.openyurt.io/binding': null });
        const ts = await tolerations();
        return byKey(ts, 'node.kubernetes.io/unreachable')?.tolerationSeconds === 300 &&
          byKey(ts, 'node.kubernetes.io/not-ready')?.tolerationSeconds === 300
          ? ts
          : undefined;
      },
      15_000,
      'podbinding to restore 300 s on an unbound node',
      250,
    );
  });

  it('delegatelease: a node Lease delegated 4 times taints the node unschedulable; undelegated, the taint goes', async () => {
    // The node went Unknown, as the node lifecycle controller marks a node whose kubelet is cut off.
    const current = await admin.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${NODE}`);
    const now = new Date().toISOString();
    await admin.requestJson(HttpMethod.PUT, `/api/v1/nodes/${NODE}/status`, {
      body: {
        ...current,
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
    });
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`;
    await admin.requestJson(HttpMethod.POST, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: NODE,
          namespace: 'kube-node-lease',
          annotations: { 'openyurt.io/delegate-heartbeat': 'true' },
        },
        spec: { holderIdentity: NODE, leaseDurationSeconds: 40, renewTime: microTime() },
      },
    });
    const taint = (n: NodeJson) => n.spec?.taints?.find((t) => t.key === 'node.openyurt.io/unschedulable');
    const renew = async (annotations: Record<string, string>) => {
      const lease = await admin.requestJson<LeaseJson>(HttpMethod.GET, leasePath);
      await admin.requestJson(HttpMethod.PUT, leasePath, {
        body: {
          ...lease,
          metadata: { ...lease.metadata, annotations },
          spec: { ...lease.spec, renewTime: microTime() },
        },
      });
    };
    let renewals = 0;
    const tainted = await waitFor(
      async () => {
        const n = await admin.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${NODE}`);
        if (taint(n)) return n;
        await renew({ 'openyurt.io/delegate-heartbeat': 'true' });
        renewals++;
        return undefined;
      },
      15_000,
      'delegatelease to taint the node node.openyurt.io/unschedulable',
      200,
    );
    expect(taint(tainted)).toEqual({ key: 'node.openyurt.io/unschedulable', value: 'true', effect: 'NoSchedule' });
    facts.delegateLeaseRenewalsBeforeTaint = renewals;
    // Then it sets an Unknown Ready back to True (reason NodeDelegateLease) with nodes/status.
    const outcome = await waitFor(
      async () =>
        (await ym.currentLog())
          .split('\n')
          .find(
            (l) =>
              l.includes(`Error updating node ${NODE}`) || l.includes(`successful set node ${NODE} ready condition`),
          ),
      15_000,
      `delegatelease to try to set ${NODE} Ready`,
    );
    facts.delegateLeaseReadyOutcome = outcome.replace(/^\S+ \S+\s+\d+ /, '');
    // v1.5.1's chart grants the delegate-lease controller nodes get/update but not nodes/status, so the write is
    // refused and Ready stays Unknown: on a real v1.5.1 cluster only the taint half of delegation works.
    expect(outcome).toContain(
      'User "system:serviceaccount:kube-system:yurt-manager-delegate-lease-controller" cannot update resource "nodes/status"',
    );
    const ready = (await admin.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${NODE}`)).status?.conditions?.find(
      (c) => c.type === 'Ready',
    );
    expect(ready).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    await waitFor(
      async () => {
        const n = await admin.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${NODE}`);
        if (!taint(n)) return n;
        await renew({});
        return undefined;
      },
      15_000,
      'delegatelease to remove the taint once the Lease is no longer delegated',
      200,
    );
  });

  it('a restart rewrites ca.crt and re-issues the hub client pair a foreign writer put there; with nothing foreign, the Secret is left as it was', async () => {
    const read = (name: string) => admin.requestJson<SecretJson>(HttpMethod.GET, `${SECRETS}/${name}`);
    const before = await read(HUB_CERTS);
    const caBefore = (await read(CA_CERTS)).data?.['ca.crt'];
    await ym.restart();
    facts.restartReadyMs = ym.readyMs;
    expect(await ym.currentLog()).toContain(`successfully write ca cert/key into ${HUB_CERTS}`);
    const untouched = await read(HUB_CERTS);
    facts.plainRestart = {
      resourceVersionChanged: untouched.metadata.resourceVersion !== before.metadata.resourceVersion,
      caCrtChanged: untouched.data?.['ca.crt'] !== before.data?.['ca.crt'],
      clientPairChanged: untouched.data?.[`${HUB_CLIENT}.crt`] !== before.data?.[`${HUB_CLIENT}.crt`],
    };
    expect(untouched.data).toEqual(before.data);
    expect((await read(CA_CERTS)).data?.['ca.crt']).toBe(caBefore);

    // A foreign writer (what the product's own coordinator certificates would be) takes the keys over.
    const foreignCa = await createCertificateAuthority('foreign-coordinator-ca');
    const foreignPair = await issueClientCertificate(foreignCa, { user: 'cluster-admin', groups: ['system:masters'] });
    const encode = (s: string) => Buffer.from(s).toString('base64');
    await admin.requestJson(HttpMethod.PATCH, `${SECRETS}/${HUB_CERTS}`, {
      query: { fieldManager: 'foreign-writer' },
      contentType: MERGE,
      body: {
        data: {
          'ca.crt': encode(foreignCa.certPem),
          [`${HUB_CLIENT}.crt`]: encode(foreignPair.certPem),
          [`${HUB_CLIENT}.key`]: encode(foreignPair.keyPem),
        },
      },
    });
    expect(ownerOf(await read(HUB_CERTS), 'ca.crt')).toEqual(['foreign-writer/Update']);
    await ym.restart();
    const after = await read(HUB_CERTS);
    expect(after.data?.['ca.crt']).toBe(caBefore);
    expect(after.data?.[`${HUB_CLIENT}.crt`]).not.toBe(encode(foreignPair.certPem));
    const caCert = new X509Certificate(b64(caBefore!));
    expect(new X509Certificate(b64(after.data![`${HUB_CLIENT}.crt`]!)).verify(caCert.publicKey)).toBe(true);
    expect(ownerOf(after, 'ca.crt')).toEqual(['yurt-manager/Update']);
    facts.hubCertsWritersAfterForeignRestart = dataWriters(after);
    // Its controllers resume once the new process holds the leader Lease (the old one was not released).
    facts.restartLeadingMs = await ym.waitLeading(30_000);
  }, 60_000);

  it('logged no error but the known ones: the nodes/status refusal above, and informers cut off by a stop', async () => {
    const known = [
      /delegate_lease_controller\.go:\d+\] Error updating node edge-1: .* cannot update resource "nodes\/status"/,
      // A process stopped while it waited for the leader Lease: its controllers' sources never synced.
      /failed to get informer from cache(" "error"="|: )Timeout: failed waiting for \S+ Informer to sync/,
      // A process being stopped: controller-runtime reports what its runnables returned after the stop began
      // (a leader Lease not renewed while the test stopped it, on a loaded machine).
      /"error received after stop sequence was engaged" "error"="leader election lost"/,
      // Optimistic concurrency: a controller wrote a NodePool another had just written; controller-runtime requeues.
      /"Reconciler error" "error"="Operation cannot be fulfilled on \S+ \\"[^"\\]+\\": the object has been modified/,
    ];
    const lines = await ym.errorLines();
    expect(lines.filter((l) => !known.some((k) => k.test(l)))).toEqual([]);
  });

  it("its log holds no key or token: not its own, not its controllers' ServiceAccount tokens (v1.5.1 prints them at --v=5; it runs at 4)", async () => {
    const known = kubeconfigSecrets(readFileSync(ym.kubeconfigPath, 'utf8'), 'yurt-manager kubeconfig');
    for (const name of ['yurt-manager-webhook-certs', CA_CERTS, HUB_CERTS, 'yurt-coordinator-static-certs']) {
      known.push(
        ...secretObjectSecrets(
          await admin.requestJson<SecretJson & { metadata: { namespace: string } }>(
            HttpMethod.GET,
            `${SECRETS}/${name}`,
          ),
        ),
      );
    }
    expect(known.length).toBeGreaterThan(5);
    const log = readFileSync(ym.logFile, 'utf8');
    const findings = new SecretScanner(known).scan('yurt-manager log', log);
    expect(describeFindings(findings)).toBe('');
    // A ServiceAccount token is a JWT: base64url JSON starting `{"` is `eyJ`.
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    expect(ym.args).toContain('--v=4');
  });
});
