import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderPoolSpirit, SpecRenderError, type KubeObject } from '../../../core/index.ts';
import { DEFAULT_PKI_POLICY } from '../../../core/render/pki-spec.ts';
import {
  caBundle,
  CERTS_SECRET_KEYS,
  COMPAT_LABEL,
  COORDINATOR_CLIENT_GROUP,
  COORDINATOR_CLIENT_USER,
  COORDINATOR_PKI_FILES,
  ensureCoordinatorPki,
  renderCertsSecret,
  renderCoordinatorServices,
  renderPoolEndpointSlices,
  type CompatPool,
} from '../../../core/yurt-coordinator/index.ts';
import { keys, nodePool, NOW, renderInput } from '../fixtures.ts';
import { container, flags, pkiOf, podSpec, type Any } from '../helpers.ts';

const compatPool = (name = 'hangzhou') =>
  nodePool(name, { metadata: { name, uid: `uid-np-${name}`, labels: { [COMPAT_LABEL]: 'compat' } } });
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
const pemCount = (s: string) => (s.match(/BEGIN CERTIFICATE/g) ?? []).length;
const sans = (pem: string) => new X509Certificate(pem).subjectAltName ?? '';

let pkiPromise: ReturnType<typeof ensureCoordinatorPki> | undefined;
const coordinatorPki = () => (pkiPromise ??= ensureCoordinatorPki({}, NOW, keys, DEFAULT_PKI_POLICY));

describe('yurt-coordinator compat: the cluster coordinator client PKI', () => {
  it('issues a client identity that is not system:masters, and reuses it byte for byte', async () => {
    const pki = await coordinatorPki();
    expect(pki.reused).toBe(false);
    const client = new X509Certificate(pki.files[COORDINATOR_PKI_FILES.clientCert]);
    expect(client.subject).toBe(`CN=${COORDINATOR_CLIENT_USER}\nO=${COORDINATOR_CLIENT_GROUP}`);
    expect(client.subject).not.toMatch(/system:masters/);
    expect(client.verify(new X509Certificate(pki.files[COORDINATOR_PKI_FILES.caCert]).publicKey)).toBe(true);
    const again = await ensureCoordinatorPki(pki.files, NOW, keys, DEFAULT_PKI_POLICY);
    expect(again).toMatchObject({ reused: true, reasons: [] });
    expect(again.files).toEqual(pki.files);
  });

  it('re-issues the client certificate when the CA is replaced', async () => {
    const pki = await coordinatorPki();
    const { [COORDINATOR_PKI_FILES.caKey]: _key, ...withoutCaKey } = pki.files;
    const renewed = await ensureCoordinatorPki(withoutCaKey, NOW, keys, DEFAULT_PKI_POLICY);
    expect(renewed.reasons[0]).toMatch(/^yurt-coordinator-client-ca: /);
    expect(renewed.reasons[1]).toBe('yurt-coordinator-yurthub-client: issuer yurt-coordinator-client-ca was renewed');
    expect(renewed.files[COORDINATOR_PKI_FILES.clientCert]).not.toBe(pki.files[COORDINATOR_PKI_FILES.clientCert]);
  });
});

describe('yurt-coordinator compat: one pool', () => {
  const compatInput = async (extra: Record<string, unknown> = {}) =>
    renderInput({
      nodePool: compatPool(),
      yurtCoordinator: {
        clientCaPem: (await coordinatorPki()).files[COORDINATOR_PKI_FILES.caCert],
        apiServerServiceIP: '10.96.0.40',
        etcdServiceIP: '10.96.0.41',
      },
      ...extra,
    });

  it('leaves a pool without the label exactly as before', async () => {
    const plain = await renderPoolSpirit(await renderInput());
    const withInput = await renderPoolSpirit(
      await renderInput({
        yurtCoordinator: { clientCaPem: (await coordinatorPki()).files[COORDINATOR_PKI_FILES.caCert] },
      }),
    );
    expect(withInput.desiredHash).toBe(plain.desiredHash);
  });

  it('refuses a labelled pool without the coordinator client CA, naming the label', async () => {
    const err = await renderPoolSpirit(await renderInput({ nodePool: compatPool() })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecRenderError);
    expect((err as SpecRenderError).issues[0]!.field).toBe(`nodePool.metadata.labels[${COMPAT_LABEL}]`);
  });

  it('exposes etcd on every address with client-certificate auth, trusting its etcd CA and the coordinator client CA', async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const etcd = flags(r, 'etcd');
    expect(etcd['listen-client-urls']).toBe('https://0.0.0.0:12379');
    expect(etcd['client-cert-auth']).toBe('true');
    expect(etcd['trusted-ca-file']).toBe('/etc/kubernetes/pki/etcd-client-ca.crt');
    expect(etcd['max-txn-ops']).toBe('102400');
    expect(container(r, 'etcd').ports).toContainEqual({ name: 'etcd-client', containerPort: 12379, protocol: 'TCP' });
    const pki = pkiOf(r);
    expect(pemCount(pki['etcd-client-ca.crt']!)).toBe(2);
    expect(pki['etcd-client-ca.crt']).toContain(pki['etcd-ca.crt']!.trim());
    // etcd gets the bundle mounted; the apiserver's client CAs gain the coordinator client CA too.
    const etcdVolume = podSpec(r).volumes.find((v: Any) => v.name === 'etcd-pki');
    expect(etcdVolume.secret.items.map((i: Any) => i.key)).toContain('etcd-client-ca.crt');
    expect(pki['client-ca.crt']).toContain((await coordinatorPki()).files[COORDINATOR_PKI_FILES.caCert].trim());
    // The peer side is untouched: only client certificates of the coordinator CA get in.
    expect(etcd['peer-trusted-ca-file']).toBe('/etc/kubernetes/pki/etcd-ca.crt');
  });

  it('puts the coordinator Service names and ClusterIPs into the serving certificates', async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const pki = pkiOf(r);
    expect(sans(pki['apiserver.crt']!)).toContain('DNS:yurt-coordinator-apiserver.kube-system.svc');
    expect(sans(pki['apiserver.crt']!)).toContain('IP Address:10.96.0.40');
    expect(sans(pki['etcd-server.crt']!)).toContain('DNS:yurt-coordinator-etcd.kube-system.svc.cluster.local');
    expect(sans(pki['etcd-server.crt']!)).toContain('IP Address:10.96.0.41');
  });

  it('binds the coordinator client group to its own role in the bootstrap, never to system:masters', async () => {
    const r = await renderPoolSpirit(await compatInput());
    const cm = r.objects.find((o) => o.kind === 'ConfigMap')! as Any;
    const docs = parseAllDocuments(cm.data['manifests.yaml']).map((d) => d.toJS() as KubeObject & Any);
    const binding = docs.find(
      (d) => d.kind === 'ClusterRoleBinding' && d.metadata.name === 'poolspirit:yurt-coordinator-yurthub',
    );
    expect(binding.subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: COORDINATOR_CLIENT_GROUP },
    ]);
    expect(binding.roleRef.name).toBe('poolspirit:yurt-coordinator-yurthub');
    expect(cm.data['manifests.yaml']).not.toMatch(/system:masters/);
    expect(r.bootstrapHash).toBe(cm.data.hash);
  });

  it('is stable: the same inputs with the PKI read back render nothing new', async () => {
    const first = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const { existingPkiFromSecrets } = await import('../../../core/index.ts');
    const again = await renderPoolSpirit(
      await compatInput({
        existingPki: existingPkiFromSecrets(
          first.objects.filter((o) => o.kind === 'Secret'),
          first.names,
        ),
      }),
    );
    expect(again.pki.reused).toBe(true);
    expect(again.desiredHash).toBe(first.desiredHash);
  });
});

describe('yurt-coordinator compat: cluster-wide objects', () => {
  const pools: CompatPool[] = [
    {
      pool: 'b-pool',
      caPem: '-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----',
      etcdCaPem: '-----BEGIN CERTIFICATE-----\nBE\n-----END CERTIFICATE-----',
      pod: { ip: '10.0.1.5', nodeName: 'b-node-0' },
    },
    {
      pool: 'a-pool',
      caPem: '-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----',
      etcdCaPem: '-----BEGIN CERTIFICATE-----\nAE\n-----END CERTIFICATE-----',
    },
  ];

  it('bundles every pool CA and etcd CA into ca.crt, in pool order whatever the input order', () => {
    const bundle = caBundle(pools);
    expect(pemCount(bundle)).toBe(4);
    expect(bundle.indexOf('\nA\n')).toBeLessThan(bundle.indexOf('\nB\n'));
    expect(caBundle([...pools].reverse())).toBe(bundle);
  });

  it('renders kube-system/yurt-coordinator-yurthub-certs with the keys YurtHub reads, labelled as the product owns it', async () => {
    const secret = renderCertsSecret(pools, await coordinatorPki()) as Any;
    expect(secret.metadata).toMatchObject({
      name: 'yurt-coordinator-yurthub-certs',
      namespace: 'kube-system',
      labels: { 'app.kubernetes.io/managed-by': 'pool-spirit' },
    });
    expect(Object.keys(secret.data).sort()).toEqual(
      [CERTS_SECRET_KEYS.ca, CERTS_SECRET_KEYS.clientCert, CERTS_SECRET_KEYS.clientKey].sort(),
    );
    expect(unb64(secret.data[CERTS_SECRET_KEYS.ca])).toBe(caBundle(pools));
    const withProxy = renderCertsSecret(pools, await coordinatorPki(), { certPem: 'C', keyPem: 'K' }) as Any;
    expect(unb64(withProxy.data[CERTS_SECRET_KEYS.nodeLeaseProxyCert])).toBe('C');
    expect(() => renderCertsSecret([], undefined as never)).toThrow(/pools is empty/);
  });

  it('renders the two Services YurtHub resolves, selector-less with the pool topology annotation', () => {
    const [api, etcd] = renderCoordinatorServices() as Any[];
    expect(api.metadata).toMatchObject({
      name: 'yurt-coordinator-apiserver',
      namespace: 'kube-system',
      annotations: { 'openyurt.io/topologyKeys': 'openyurt.io/nodepool' },
    });
    expect(api.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 10270, protocol: 'TCP' }]);
    expect(etcd.spec.ports).toEqual([{ name: 'https', port: 2379, targetPort: 12379, protocol: 'TCP' }]);
    expect(api.spec.selector).toBeUndefined();
  });

  it("points each pool's EndpointSlices at its pool-spirit pod and node, and renders none before the pod runs", () => {
    const slices = renderPoolEndpointSlices(pools[0]!) as Any[];
    expect(slices.map((s) => s.metadata.labels['kubernetes.io/service-name'])).toEqual([
      'yurt-coordinator-apiserver',
      'yurt-coordinator-etcd',
    ]);
    expect(slices[0].endpoints).toEqual([
      { addresses: ['10.0.1.5'], nodeName: 'b-node-0', conditions: { ready: true } },
    ]);
    expect(slices[1].ports).toEqual([{ name: 'https', port: 12379, protocol: 'TCP' }]);
    expect(renderPoolEndpointSlices(pools[1]!)).toEqual([]);
  });
});
