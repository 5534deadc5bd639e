/**
 * The requests a YurtHub makes to its pool-spirit apiserver with its node certificate: registering and
 * updating Nodes, electing the leader on Lease kube-system/yurthub, renewing its node Lease in
 * kube-node-lease, reading its NodePool, and (as leader)
 * copying pool-scoped Endpoints and EndpointSlices. Each returns the HTTP status the API answered (an update is the
 * client-go get-then-put, so both must be allowed).
 */
import type { CertAndKey } from '../../../../../dev/local/pki.ts';
import { call } from './world.ts';

export interface Target {
  url: string;
  caPem: string;
  client: CertAndKey;
}

export interface YurtHubCall {
  name: string;
  run(t: Target, round: string): Promise<number>;
}

/** Allowed: done, or refused for a reason other than authorization (409: the object already exists). */
export const permitted = (status: number) => (status >= 200 && status < 300) || status === 409;

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';

async function getThenPut(t: Target, path: string, change: (o: Record<string, any>) => void): Promise<number> {
  const got = await call(t.url, t.caPem, 'GET', path, { client: t.client });
  if (got.status !== 200) return got.status;
  change(got.body);
  return (await call(t.url, t.caPem, 'PUT', path, { client: t.client, body: got.body })).status;
}

/** `nodeName` exists (created by an admin) and `pool` is a NodePool in the pool-spirit. */
export function yurtHubCalls(nodeName: string, pool: string): YurtHubCall[] {
  return [
    {
      name: 'create Node',
      run: async (t, round) =>
        (
          await call(t.url, t.caPem, 'POST', '/api/v1/nodes', {
            client: t.client,
            body: { apiVersion: 'v1', kind: 'Node', metadata: { name: `yurthub-${round}` } },
          })
        ).status,
    },
    {
      name: 'update Node',
      run: (t, round) =>
        getThenPut(t, `/api/v1/nodes/${nodeName}`, (o) => {
          o.metadata.labels = { ...o.metadata.labels, 'yurthub-round': round };
        }),
    },
    {
      name: 'create Lease kube-system/yurthub',
      run: async (t) =>
        (
          await call(t.url, t.caPem, 'POST', LEASE_PATH, {
            client: t.client,
            body: {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name: 'yurthub', namespace: 'kube-system' },
              spec: { holderIdentity: nodeName, leaseDurationSeconds: 15 },
            },
          })
        ).status,
    },
    {
      name: 'update Lease kube-system/yurthub',
      run: (t) =>
        getThenPut(t, `${LEASE_PATH}/yurthub`, (o) => {
          o.spec = { ...o.spec, holderIdentity: nodeName, renewTime: new Date().toISOString().replace('Z', '000Z') };
        }),
    },
    {
      name: 'renew Lease kube-node-lease/<node>',
      run: async (t) => {
        const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${nodeName}`;
        const body = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: nodeName, namespace: 'kube-node-lease' },
          spec: { holderIdentity: nodeName, leaseDurationSeconds: 40 },
        };
        const created = await call(
          t.url,
          t.caPem,
          'POST',
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
          { client: t.client, body },
        );
        if (created.status !== 409) return created.status;
        return getThenPut(t, path, (o) => {
          o.spec = { ...o.spec, renewTime: new Date().toISOString().replace('Z', '000Z') };
        });
      },
    },
    {
      name: 'get NodePool',
      run: async (t) =>
        (await call(t.url, t.caPem, 'GET', `/apis/apps.openyurt.io/v1beta1/nodepools/${pool}`, { client: t.client }))
          .status,
    },
    {
      name: 'list NodePools',
      run: async (t) =>
        (await call(t.url, t.caPem, 'GET', '/apis/apps.openyurt.io/v1beta1/nodepools', { client: t.client })).status,
    },
    {
      name: 'create Endpoints',
      run: async (t, round) =>
        (
          await call(t.url, t.caPem, 'POST', '/api/v1/namespaces/default/endpoints', {
            client: t.client,
            body: {
              apiVersion: 'v1',
              kind: 'Endpoints',
              metadata: { name: `web-${round}`, namespace: 'default' },
              subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
            },
          })
        ).status,
    },
    {
      name: 'create EndpointSlice',
      run: async (t, round) =>
        (
          await call(t.url, t.caPem, 'POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
            client: t.client,
            body: {
              apiVersion: 'discovery.k8s.io/v1',
              kind: 'EndpointSlice',
              metadata: { name: `web-${round}`, namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
              addressType: 'IPv4',
              endpoints: [{ addresses: ['10.0.0.1'] }],
              ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
            },
          })
        ).status,
    },
  ];
}

/** Runs every call; returns the status of each by name. */
export async function runAll(calls: YurtHubCall[], t: Target, round: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.name] = await c.run(t, round);
  return out;
}
