/**
 * The whole product on real Kubernetes, locally: `local up --control-plane real --kubelet process`, as
 * startLocalFleet. Each cluster is the built control plane with the product installed from infra/cluster;
 * the functions, forwarder and agents reach it as their own identities; each pool's pool-spirit is a real
 * kube-apiserver and etcd with the rendered flags, placed by the real scheduler.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { getCluster } from '../../../adapters/state-table/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import type { ProcessKubelet } from '../../../dev/local/kubelet/process-kubelet.ts';
import { PRODUCT_IDENTITIES } from '../../../dev/local/real-cluster/install.ts';
import * as x509 from '../../../shared/x509.ts';
import { waitFor } from '../../support/wait.ts';

type Obj = Record<string, any>;
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The user a kubeconfig's client certificate names (its CN). */
function certificateUser(file: string): string {
  const kc = parse(readFileSync(file, 'utf8'));
  const pem = Buffer.from(kc.users[0].user['client-certificate-data'], 'base64').toString('utf8');
  return new x509.X509Certificate(pem).subjectName.getField('CN')[0]!;
}

describe('local fleet on the real control plane with the process kubelet (1 cluster × 2 pools)', () => {
  let fleet: LocalFleet;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-real-fleet-'));
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 2,
      nodesPerPool: 1,
      cloudPools: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      kubelet: 'process',
      controlPlane: 'real',
    });
    await fleet.waitConverged(150_000);
  }, 240_000);
  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs a real kube-apiserver and etcd per pool, with the rendered flags, on the node the real scheduler chose', async () => {
    const [c] = fleet.clusters;
    const host = RawObjectApi.fromKubeConfig(c!.kubeConfig);
    const pods = await host.requestJson<{ items: Obj[] }>(
      HttpMethod.GET,
      `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods`,
    );
    const running = (c!.kubelet as ProcessKubelet).poolSpirits();
    expect(running).toHaveLength(2);
    for (const r of running) {
      const pod = pods.items.find((p) => `${p.metadata.namespace}/${p.metadata.name}` === r.podKey)!;
      expect(pod.spec.nodeName).toMatch(/-node-0$/);
      expect(pod.metadata.ownerReferences[0].kind).toBe('ReplicaSet');
      const rendered: string[] = pod.spec.containers.find((x: Obj) => x.name === 'kube-apiserver').args;
      const live = cmdline(r.apiServer.pid);
      expect(live[0]).toMatch(/kube-apiserver$/);
      // Every rendered flag runs: unchanged, or (paths and ports) translated.
      for (const flag of rendered)
        expect(
          live.some((a) => a === flag || a.split('=')[0] === flag.split('=')[0]),
          flag,
        ).toBe(true);
      expect(live).toContain('--authorization-mode=RBAC');
      expect(cmdline(r.etcd.pid)[0]).toMatch(/etcd$/);
    }
  });

  it('each part reaches the cluster as its own identity', async () => {
    const [c] = fleet.clusters;
    const registration = await getCluster(fleet.table, c!.id);
    const access = registration?.access as { kind: string; path: string };
    expect(certificateUser(access.path)).toBe(PRODUCT_IDENTITIES.reconciler.user);
    expect(c!.real).toBeDefined();
    expect(c!.cluster).toBeUndefined();
  });

  it('the Cloud pool gets nothing and the edge pools report their leader through the real path', async () => {
    const [c] = fleet.clusters;
    const host = RawObjectApi.fromKubeConfig(c!.kubeConfig);
    const spirits = await host.requestJson<{ items: Obj[] }>(
      HttpMethod.GET,
      '/apis/poolspirit.io/v1alpha1/poolspirits',
    );
    expect(spirits.items.map((s) => s.metadata.name).sort()).toEqual(['pool-00', 'pool-01']);
    // The stand-in YurtHub elects with a node certificate; the agent reads the Lease on its next pass.
    const holders = await waitFor(
      async () => {
        const list = await host.requestJson<{ items: Obj[] }>(
          HttpMethod.GET,
          '/apis/poolspirit.io/v1alpha1/poolspirits',
        );
        const h = list.items.map((s) => s.status?.leader?.holder);
        return h.every(Boolean) ? h : undefined;
      },
      40_000,
      'both leaders reported',
    );
    for (const h of holders) expect(h).toMatch(/-node-0$/);
  }, 50_000);
});
