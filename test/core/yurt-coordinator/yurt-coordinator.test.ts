import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { type KubeObject, renderPoolSpirit, SpecRenderError } from '../../../core/index.ts';
import { DEFAULT_PKI_POLICY } from '../../../core/render/pki-spec.ts';
import { PKI_SECRET_KEYS } from '../../../core/render/secrets.ts';
import {
  COMPAT_LABEL,
  COORDINATOR_CLIENT_GROUP,
  COORDINATOR_CLIENT_USER,
  COORDINATOR_ETCD_PREFIXES,
  COORDINATOR_ETCD_PROXY_USER,
  COORDINATOR_PKI_FILES,
  ensureCoordinatorPki,
} from '../../../core/yurt-coordinator/index.ts';
import { keys, NOW, nodePool, renderInput } from '../fixtures.ts';
import { type Any, cert, container, flags, pkiOf, podSpec, secretData, x509 } from '../helpers.ts';

const compatPool = (name = 'hangzhou') =>
  nodePool(name, { metadata: { name, uid: `uid-np-${name}`, labels: { [COMPAT_LABEL]: 'compat' } } });
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

  it('gives a pool without the label none of the etcd auth pieces: no proxy, no auth flags, no proxy certificate', async () => {
    const plain = await renderPoolSpirit(await renderInput({ existingPki: undefined }));
    expect(podSpec(plain).containers.map((c: Any) => c.name)).toEqual(['kube-apiserver', 'etcd', 'agent']);
    expect(podSpec(plain).volumes.map((v: Any) => v.name)).not.toContain('etcd-proxy-pki');
    expect(Object.keys(flags(plain, 'agent')).filter((f) => f.startsWith('etcd-auth'))).toEqual([]);
    expect(Object.keys(secretData(plain, plain.names.pkiSecret)).sort()).toEqual([...PKI_SECRET_KEYS.pki].sort());
    expect(Object.keys(pkiOf(plain)).filter((k) => /etcd-proxy|etcd-client-ca/.test(k))).toEqual([]);
  });

  it('refuses a labelled pool without the coordinator client CA, naming the label', async () => {
    const err = await renderPoolSpirit(await renderInput({ nodePool: compatPool() })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpecRenderError);
    expect((err as SpecRenderError).issues[0]!.field).toBe(`nodePool.metadata.labels[${COMPAT_LABEL}]`);
  });

  it("keeps etcd a plain pool's: loopback only, its own etcd CA only, with upstream's transaction limits", async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const plain = await renderPoolSpirit(await renderInput({ existingPki: undefined }));
    const etcd = flags(r, 'etcd');
    expect(etcd['listen-client-urls']).toBe('https://127.0.0.1:12379');
    expect(etcd['trusted-ca-file']).toBe('/etc/kubernetes/pki/etcd-ca.crt');
    expect(etcd['client-cert-auth']).toBe('true');
    expect(etcd['max-txn-ops']).toBe('102400');
    expect(etcd['max-request-bytes']).toBe('100000000');
    // Apart from the two limits, etcd's container is exactly a plain pool's.
    const { 'max-txn-ops': _ops, 'max-request-bytes': _bytes, ...rest } = etcd;
    expect(rest).toEqual(flags(plain, 'etcd'));
    expect(container(r, 'etcd').ports).toEqual(container(plain, 'etcd').ports);
    expect(podSpec(r).volumes.find((v: Any) => v.name === 'etcd-pki')).toEqual(
      podSpec(plain).volumes.find((v: Any) => v.name === 'etcd-pki'),
    );
    // The apiserver's client CAs gain the coordinator client CA (the hubs' apiserver identity).
    expect(pkiOf(r)['client-ca.crt']).toContain((await coordinatorPki()).files[COORDINATOR_PKI_FILES.caCert].trim());
  });

  it('adds the etcd proxy on the hub-facing port, from the agent image, trusting the coordinator client CA and the etcd CA', async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const proxy = container(r, 'etcd-proxy');
    expect(proxy.image).toBe(container(r, 'agent').image);
    expect(proxy.args[0]).toBe('etcd-proxy');
    expect(flags(r, 'etcd-proxy')).toMatchObject({
      'listen-url': 'https://0.0.0.0:12382',
      'etcd-endpoint': 'https://127.0.0.1:12379',
      'cert-file': '/etc/poolspirit/etcd-proxy/yurt-coordinator-etcd-proxy.crt',
      'key-file': '/etc/poolspirit/etcd-proxy/yurt-coordinator-etcd-proxy.key',
      'trusted-ca-file': '/etc/poolspirit/etcd-proxy/etcd-client-ca.crt',
      'etcd-ca-file': '/etc/poolspirit/etcd-proxy/etcd-ca.crt',
      'refused-prefix': '/registry/',
    });
    expect(proxy.ports).toEqual([{ name: 'etcd-proxy', containerPort: 12382, protocol: 'TCP' }]);
    expect(proxy.readinessProbe.tcpSocket).toEqual({ port: 12382 });
    expect(proxy.resources).toEqual({ requests: { cpu: '10m', memory: '96Mi' }, limits: { memory: '192Mi' } });
    expect(proxy.volumeMounts).toEqual([
      { name: 'etcd-proxy-pki', mountPath: '/etc/poolspirit/etcd-proxy', readOnly: true },
    ]);
    // Its volume holds its own pair and the two CA files, nothing of etcd's or the apiserver's keys.
    const volume = podSpec(r).volumes.find((v: Any) => v.name === 'etcd-proxy-pki');
    expect(volume.secret.items.map((i: Any) => i.key)).toEqual([
      'etcd-ca.crt',
      'etcd-client-ca.crt',
      'yurt-coordinator-etcd-proxy.crt',
      'yurt-coordinator-etcd-proxy.key',
    ]);
    expect(volume.secret.secretName).toBe(r.names.pkiSecret);
    const pki = pkiOf(r);
    expect(pemCount(pki['etcd-client-ca.crt']!)).toBe(2);
    expect(pki['etcd-client-ca.crt']).toContain(pki['etcd-ca.crt']!.trim());
    expect(pki['etcd-client-ca.crt']).toContain((await coordinatorPki()).files[COORDINATOR_PKI_FILES.caCert].trim());
    // No container mounts the ServiceAccount token or the agent's etcd client key but the agent.
    expect(proxy.volumeMounts.map((m: Any) => m.name)).not.toContain('agent-token');
  });

  it('has the agent set up etcd auth: root for the apiserver/agent identity, the proxy bounded to the hub prefixes', async () => {
    const r = await renderPoolSpirit(await compatInput());
    const agent = flags(r, 'agent');
    expect(agent['etcd-auth-root-users']).toBe('poolspirit-apiserver-etcd-client');
    expect(agent['etcd-auth-limited-user']).toBe(COORDINATOR_ETCD_PROXY_USER);
    expect(agent['etcd-auth-limited-prefixes']!.split(',')).toEqual([
      '/registry/services/endpoints',
      '/mirror/rv/registry/services/endpoints',
      '/registry/endpointslices',
      '/mirror/rv/registry/endpointslices',
      '/registry/pods/',
      '/mirror/rv/registry/pods/',
      '/registry/minions/',
      '/mirror/rv/registry/minions/',
    ]);
    // The root user is the CN kube-apiserver and the agent present to etcd.
    expect(new X509Certificate(pkiOf(r)['apiserver-etcd-client.crt']!).subject).toBe(
      `CN=${agent['etcd-auth-root-users']}`,
    );
    // Nothing under the storage prefix but those: no RBAC, no Secrets, no Leases.
    for (const p of COORDINATOR_ETCD_PREFIXES)
      expect(p).toMatch(/^\/(registry|mirror\/rv\/registry)\/(services\/endpoints|endpointslices|pods\/|minions\/)$/);
  });

  it("issues the proxy a certificate from the pool's etcd CA, named as the coordinator etcd Service, CN = its etcd user", async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const pki = pkiOf(r);
    const proxy = new X509Certificate(pki['yurt-coordinator-etcd-proxy.crt']!);
    expect(proxy.subject).toBe(`CN=${COORDINATOR_ETCD_PROXY_USER}`);
    expect(proxy.verify(new X509Certificate(pki['etcd-ca.crt']!).publicKey)).toBe(true);
    expect(proxy.verify(new X509Certificate(pki['ca.crt']!).publicKey)).toBe(false);
    expect(proxy.subjectAltName).toContain('DNS:yurt-coordinator-etcd.kube-system.svc.cluster.local');
    expect(proxy.subjectAltName).toContain('IP Address:10.96.0.41');
    expect(proxy.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert(pki['yurt-coordinator-etcd-proxy.crt']!).getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([
      x509.ExtendedKeyUsage.serverAuth,
      x509.ExtendedKeyUsage.clientAuth,
    ]);
  });

  it("puts the coordinator Service names and ClusterIPs into the serving certificates (etcd's: the proxy's)", async () => {
    const r = await renderPoolSpirit(await compatInput({ existingPki: undefined }));
    const pki = pkiOf(r);
    expect(sans(pki['apiserver.crt']!)).toContain('DNS:yurt-coordinator-apiserver.kube-system.svc');
    expect(sans(pki['apiserver.crt']!)).toContain('IP Address:10.96.0.40');
    expect(sans(pki['yurt-coordinator-etcd-proxy.crt']!)).toContain('IP Address:10.96.0.41');
    // etcd itself is no longer reached under those names.
    expect(sans(pki['etcd-server.crt']!)).toBe('DNS:localhost, IP Address:127.0.0.1');
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
