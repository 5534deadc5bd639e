import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderPoolSpirit, SpecRenderError, type KubeObject } from '../../../core/index.ts';
import { DEFAULT_PKI_POLICY } from '../../../core/render/pki-spec.ts';
import {
  COMPAT_LABEL,
  COORDINATOR_CLIENT_GROUP,
  COORDINATOR_CLIENT_USER,
  COORDINATOR_PKI_FILES,
  ensureCoordinatorPki,
} from '../../../core/yurt-coordinator/index.ts';
import { keys, nodePool, NOW, renderInput } from '../fixtures.ts';
import { container, flags, pkiOf, podSpec, type Any } from '../helpers.ts';

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
