import { describe, expect, it } from 'vitest';
import type { KubeObject, NodePool } from '../../../core/index.ts';
import { PKI_FILES } from '../../../core/render/pki.ts';
import {
  CERTS_SECRET_KEYS,
  COMPAT_LABEL,
  type CompatPool,
  type CoordinatorPod,
  CoordinatorRenderError,
  caBundle,
  compatInstallObjects,
  compatPoolsOf,
  coordinatorEndpoints,
  MAX_ENDPOINTS_PER_SLICE,
  nodeLeaseProxyData,
  renderCertsSecret,
  renderCoordinatorEndpointSlices,
  renderCoordinatorServices,
  usableEndpointIP,
} from '../../../core/yurt-coordinator/index.ts';
import { nodePool } from '../fixtures.ts';
import type { Any } from '../helpers.ts';

const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
const pemCount = (s: string) => (s.match(/BEGIN CERTIFICATE/g) ?? []).length;
const certPem = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----`;
const pod = (name: string, ip: string, nodeName: string, ready = true): CoordinatorPod => ({
  namespace: 'pool-spirit-system',
  name,
  ip,
  nodeName,
  ready,
});
const pool = (name: string, pods: CoordinatorPod[] = []): CompatPool => ({
  pool: name,
  caPem: certPem(`${name}-ca`),
  etcdCaPem: certPem(`${name}-etcd-ca`),
  pods,
});

// Upper case sorts before lower case in code point order, but not in a locale's.
const POOLS = [
  pool('b-pool', [pod('ps-b-pool-2', '10.0.2.7', 'b-node-1'), pod('ps-b-pool-1', '10.0.2.5', 'b-node-0', false)]),
  pool('a-pool', [pod('ps-a-pool-1', '10.0.1.5', 'a-node-0')]),
  pool('Z-pool'),
];

describe('the certs Secret', () => {
  it("bundles every pool's CA and etcd CA into ca.crt, by pool in code point order whatever the input order", () => {
    const bundle = caBundle(POOLS);
    expect(pemCount(bundle)).toBe(6);
    const at = (s: string) => bundle.indexOf(s);
    expect(at('Z-pool-ca')).toBeLessThan(at('a-pool-ca'));
    expect(at('a-pool-ca')).toBeLessThan(at('a-pool-etcd-ca'));
    expect(at('a-pool-etcd-ca')).toBeLessThan(at('b-pool-ca'));
    expect(caBundle([...POOLS].reverse())).toBe(bundle);
    expect(caBundle([POOLS[1]!, POOLS[2]!, POOLS[0]!])).toBe(bundle);
    expect(bundle.endsWith('-----END CERTIFICATE-----\n')).toBe(true);
    expect(caBundle([])).toBe('');
  });

  it('renders only the data the reconciler owns: the bundle and the client pair, no labels, type or lease-proxy keys', () => {
    const secret = renderCertsSecret(POOLS, { certPem: 'CLIENT-CERT', keyPem: 'CLIENT-KEY' }) as Any;
    expect(secret.metadata).toEqual({ name: 'yurt-coordinator-yurthub-certs', namespace: 'kube-system' });
    expect(secret.type).toBeUndefined();
    expect(Object.keys(secret.data).sort()).toEqual(
      [CERTS_SECRET_KEYS.ca, CERTS_SECRET_KEYS.clientCert, CERTS_SECRET_KEYS.clientKey].sort(),
    );
    expect(unb64(secret.data[CERTS_SECRET_KEYS.ca])).toBe(caBundle(POOLS));
    expect(unb64(secret.data[CERTS_SECRET_KEYS.clientKey])).toBe('CLIENT-KEY');
    // The operator's part, under the keys YurtHub reads.
    expect(Object.keys(nodeLeaseProxyData({ certPem: 'C', keyPem: 'K' })).sort()).toEqual([
      'node-lease-proxy-client.crt',
      'node-lease-proxy-client.key',
    ]);
    // The last compat pool gone: an empty bundle, the client pair kept.
    expect(unb64((renderCertsSecret([], { certPem: 'C', keyPem: 'K' }) as Any).data['ca.crt'])).toBe('');
  });
});

describe('one EndpointSlice per Service, every pool in it', () => {
  it('holds every running pod of every pool, by pool then pod name, whatever the input order', () => {
    const [api, etcd] = renderCoordinatorEndpointSlices(POOLS, 'IPv4') as Any[];
    expect(api.metadata).toEqual({ name: 'yurt-coordinator-apiserver', namespace: 'kube-system' });
    expect(etcd.metadata.name).toBe('yurt-coordinator-etcd');
    expect(api.endpoints.map((e: Any) => [e.targetRef.name, e.addresses[0], e.nodeName, e.conditions.ready])).toEqual([
      ['ps-a-pool-1', '10.0.1.5', 'a-node-0', true],
      ['ps-b-pool-1', '10.0.2.5', 'b-node-0', false],
      ['ps-b-pool-2', '10.0.2.7', 'b-node-1', true],
    ]);
    expect(etcd.endpoints).toEqual(api.endpoints);
    expect(api.ports).toEqual([{ name: 'https', port: 10270, protocol: 'TCP' }]);
    expect(etcd.ports).toEqual([{ name: 'https', port: 12382, protocol: 'TCP' }]);
    expect(renderCoordinatorEndpointSlices([...POOLS].reverse(), 'IPv4')).toEqual([api, etcd]);
    // No labels: the install's (kubernetes.io/service-name among them) stay the installer's.
    expect(api.metadata.labels).toBeUndefined();
  });

  it("gives each pool's hubs only their own pool's pod once YurtHub's node-pool topology filter has run", () => {
    // pkg/yurthub/filter/servicetopology (v1.5.0), reassembleEndpointSlice: keep an endpoint when its nodeName
    // is among the nodes of the hub's pool (NodePool status.nodes).
    const nodesOf: Record<string, string[]> = {
      'a-pool': ['a-node-0', 'a-node-1'],
      'b-pool': ['b-node-0', 'b-node-1'],
    };
    const [slice] = renderCoordinatorEndpointSlices(POOLS, 'IPv4') as Any[];
    const seenBy = (p: string) =>
      slice.endpoints.filter((e: Any) => nodesOf[p]!.includes(e.nodeName)).map((e: Any) => e.targetRef.name);
    expect(seenBy('a-pool')).toEqual(['ps-a-pool-1']);
    expect(seenBy('b-pool')).toEqual(['ps-b-pool-1', 'ps-b-pool-2']);
    // The filter dereferences nodeName: every endpoint must carry one.
    expect(slice.endpoints.every((e: Any) => typeof e.nodeName === 'string' && e.nodeName.length > 0)).toBe(true);
  });

  it('leaves out addresses kube-apiserver refuses in a slice, and those of the other family', () => {
    expect(
      ['127.0.0.1', '169.254.1.1', '0.0.0.0', '224.0.0.5', '::1', 'fe80::1', 'nonsense'].map((ip) =>
        usableEndpointIP(ip, 'IPv4'),
      ),
    ).toEqual([false, false, false, false, false, false, false]);
    expect(usableEndpointIP('10.244.1.9', 'IPv4')).toBe(true);
    expect(usableEndpointIP('fd00::9', 'IPv6')).toBe(true);
    expect(usableEndpointIP('fd00::9', 'IPv4')).toBe(false);
    const local = [
      pool('p', [pod('ps-p-1', '127.0.0.1', 'n0'), pod('ps-p-2', 'fd00::2', 'n1'), pod('ps-p-3', '10.0.0.3', 'n2')]),
    ];
    expect((coordinatorEndpoints(local, 'IPv4') as Any[]).map((e) => e.addresses[0])).toEqual(['10.0.0.3']);
    expect((coordinatorEndpoints(local, 'IPv6') as Any[]).map((e) => e.addresses[0])).toEqual(['fd00::2']);
  });

  it('refuses more endpoints than one slice may hold, saying how many', () => {
    const many = Array.from({ length: MAX_ENDPOINTS_PER_SLICE + 1 }, (_, i) =>
      pool(`p-${i}`, [pod(`ps-p-${i}`, `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`, `n-${i}`)]),
    );
    expect(() => renderCoordinatorEndpointSlices(many, 'IPv4')).toThrow(CoordinatorRenderError);
    expect(() => renderCoordinatorEndpointSlices(many, 'IPv4')).toThrow(/1001 pool-spirit pods .* 1000 endpoints/);
    expect(() => renderCoordinatorEndpointSlices(many.slice(1), 'IPv4')).not.toThrow();
  });
});

describe('the compat pools, from what the reconcile read', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const compat = (name: string, extra: Partial<NodePool> = {}) =>
    nodePool(name, {
      ...extra,
      metadata: { name, uid: `uid-np-${name}`, labels: { [COMPAT_LABEL]: 'compat' }, ...extra.metadata },
    });
  const caSecret = (name: string, ownerUid = `uid-np-${name}`): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `ps-${name}-ca`,
      ownerReferences: [{ apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', name, uid: ownerUid }],
    },
    data: { [PKI_FILES.caCert]: b64(certPem(`${name}-ca`)), [PKI_FILES.etcdCaCert]: b64(certPem(`${name}-etcd-ca`)) },
  });
  const podObject = (
    name: string,
    poolName: string,
    status: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'pool-spirit-system', labels: { 'poolspirit.io/pool': poolName }, ...extra },
    spec: { nodeName: `${poolName}-node-0` },
    status,
  });
  const running = { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] };

  it('takes wanted, labelled pools with a CA of their own, and their running pods only', () => {
    const nodePools = [
      compat('ok'),
      compat('cloud', { spec: { type: 'Cloud' } }),
      compat('deleting', {
        metadata: {
          name: 'deleting',
          uid: 'uid-np-deleting',
          labels: { [COMPAT_LABEL]: 'compat' },
          deletionTimestamp: '2026-01-01T00:00:00Z',
        },
      }),
      nodePool('plain'),
      compat('no-ca'),
      compat('recreated'),
    ];
    const caSecrets = new Map<string, KubeObject | undefined>([
      ['ok', caSecret('ok')],
      ['cloud', caSecret('cloud')],
      ['deleting', caSecret('deleting')],
      ['plain', caSecret('plain')],
      ['no-ca', undefined],
      ['recreated', caSecret('recreated', 'uid-of-the-pool-before')],
    ]);
    const pods = [
      podObject('ps-ok-a', 'ok', running),
      podObject('ps-ok-pending', 'ok', { phase: 'Pending' }),
      podObject('ps-ok-no-ip', 'ok', { phase: 'Running' }),
      podObject('ps-ok-leaving', 'ok', running, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      podObject('ps-ok-unready', 'ok', { ...running, podIP: '10.0.0.2', conditions: [] }),
      podObject('ps-plain-a', 'plain', running),
    ];
    const pools = compatPoolsOf({ nodePools, caSecrets, pods });
    expect(pools.map((p) => p.pool)).toEqual(['ok']);
    expect(pools[0]!.caPem).toBe(certPem('ok-ca'));
    expect(pools[0]!.etcdCaPem).toBe(certPem('ok-etcd-ca'));
    expect(pools[0]!.pods.map((p) => [p.name, p.ip, p.nodeName, p.ready])).toEqual([
      ['ps-ok-a', '10.0.0.1', 'ok-node-0', true],
      ['ps-ok-unready', '10.0.0.2', 'ok-node-0', false],
    ]);
  });
});

describe('the install-time objects (infra/cluster/components/yurt-coordinator-compat)', () => {
  it('are the certs Secret without data, the two Services in full and the two slices without endpoints', () => {
    const objects = compatInstallObjects() as Any[];
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'Secret kube-system/yurt-coordinator-yurthub-certs',
      'Service kube-system/yurt-coordinator-apiserver',
      'Service kube-system/yurt-coordinator-etcd',
      'EndpointSlice kube-system/yurt-coordinator-apiserver',
      'EndpointSlice kube-system/yurt-coordinator-etcd',
    ]);
    expect(objects[0].data).toBeUndefined();
    expect(objects.slice(1, 3)).toEqual(renderCoordinatorServices());
    expect(objects[1].spec.selector).toBeUndefined();
    expect(objects[1].metadata.annotations).toEqual({ 'openyurt.io/topologyKeys': 'openyurt.io/nodepool' });
    for (const slice of objects.slice(3)) {
      expect(slice.endpoints).toBeUndefined();
      expect(slice.metadata.labels['kubernetes.io/service-name']).toBe(slice.metadata.name);
      expect(slice.metadata.labels['endpointslice.kubernetes.io/managed-by']).toBe('poolspirit.io');
    }
  });
});
