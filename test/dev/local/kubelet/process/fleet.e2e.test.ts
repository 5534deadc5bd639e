import { existsSync, readFileSync } from 'node:fs';
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RawObjectApi } from '../../../../../adapters/kubernetes/raw-object-api.ts';
import { BOOTSTRAP_HASH_ANNOTATION } from '../../../../../core/render/bootstrap.ts';
import { objectNames } from '../../../../../core/render/names.ts';
import { PRODUCT_NAMESPACE, poolName } from '../../../../../dev/local/fleet/seed.ts';
import type { CertAndKey } from '../../../../../dev/local/pki.ts';
import {
  alive,
  call,
  type ProcessFleet,
  podKey,
  poolSpiritPod,
  restartEvents,
  startProcessFleet,
  waitFor,
} from './world.ts';

type Obj = Record<string, any>;
const POOL = poolName(0);
const NAMES = objectNames(POOL);

/** The agent's admin identity, from the rendered -agent Secret (what the real agent authenticates with). */
async function agentIdentity(api: RawObjectApi): Promise<CertAndKey & { caPem: string }> {
  const secret = await api.requestJson<Obj>(
    HttpMethod.GET,
    `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${NAMES.agentSecret}`,
  );
  const kc = parse(Buffer.from(secret.data.kubeconfig, 'base64').toString('utf8'));
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    certPem: b64(kc.users[0].user['client-certificate-data']),
    keyPem: b64(kc.users[0].user['client-key-data']),
    caPem: b64(kc.clusters[0].cluster['certificate-authority-data']),
  };
}

describe('local fleet, process kubelet: one edge pool', () => {
  let world: ProcessFleet;
  let host: RawObjectApi;
  let admin: CertAndKey & { caPem: string };

  beforeAll(async () => {
    world = await startProcessFleet();
    host = RawObjectApi.fromKubeConfig(world.fleet.clusters[0].kubeConfig);
  }, 30_000);
  afterAll(async () => {
    await world?.stop();
  });

  it('reaches Available through the real agent, with the pod reported Running from what runs', async () => {
    await world.fleet.waitConverged(40_000);
    const spirit = await host.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}`);
    const cm = await host.requestJson<Obj>(
      HttpMethod.GET,
      `/api/v1/namespaces/${PRODUCT_NAMESPACE}/configmaps/${NAMES.bootstrapConfigMap}`,
    );
    expect(spirit.status.conditions).toContainEqual(expect.objectContaining({ type: 'Available', status: 'True' }));
    expect(spirit.status.bootstrap.appliedHash).toBe(cm.metadata.annotations[BOOTSTRAP_HASH_ANNOTATION]);
    // Only a real etcd has sizes to report (the sim agent writes health alone).
    expect(spirit.status.etcd.dbSizeBytes).toBeGreaterThan(0);

    const pod = (await poolSpiritPod(world.fleet))!;
    expect(pod.status.phase).toBe('Running');
    expect(pod.status.podIP).toBe('127.0.0.1');
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
    expect(pod.status.containerStatuses.map((c: Obj) => [c.name, c.ready, Object.keys(c.state)[0]]).sort()).toEqual([
      ['agent', true, 'running'],
      ['etcd', true, 'running'],
      ['kube-apiserver', true, 'running'],
    ]);

    // The real agent applied the bootstrap into the pool-spirit's own apiserver, with its rendered identity.
    const running = world.kubelet.poolSpirit(podKey(pod))!;
    admin = await agentIdentity(host);
    const binding = await call(
      running.apiServerUrl,
      admin.caPem,
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/poolspirit:yurthub',
      { client: admin },
    );
    expect(binding.status).toBe(200);
    expect(binding.body.subjects).toEqual([expect.objectContaining({ kind: 'Group', name: 'system:nodes' })]);

    // etcd runs with the rendered storage flags and keeps its data in /dev/shm.
    const rendered: string[] = pod.spec.containers.find((c: Obj) => c.name === 'etcd').args;
    const cmdline = readFileSync(`/proc/${running.etcd.pid}/cmdline`, 'utf8').split('\0');
    for (const flag of ['quota-backend-bytes', 'auto-compaction-mode', 'auto-compaction-retention', 'snapshot-count']) {
      const arg = rendered.find((a) => a.startsWith(`--${flag}=`))!;
      expect(arg, flag).toBeDefined();
      expect(cmdline).toContain(arg);
    }
    expect(running.etcd.dataDir.startsWith('/dev/shm/')).toBe(true);
  }, 60_000);

  it('stops etcd and the apiserver when the pod is deleted, and runs the next pod with a fresh bootstrap', async () => {
    const pod = (await poolSpiritPod(world.fleet))!;
    const old = world.kubelet.poolSpirit(podKey(pod))!;
    const { pid, dataDir } = old.etcd;
    await host.requestJson(HttpMethod.DELETE, `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`);

    await waitFor(() => !alive(pid) && !existsSync(dataDir), 10_000, 'etcd of the deleted pod and its data gone');
    await expect(call(old.apiServerUrl, admin.caPem, 'GET', '/readyz')).rejects.toThrow(/ECONNREFUSED/);

    // The Deployment replaces the pod; its pool-spirit starts empty and its agent bootstraps it again.
    const next = await waitFor(
      async () => {
        const p = await poolSpiritPod(world.fleet);
        return p &&
          p.metadata.name !== pod.metadata.name &&
          p.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True')
          ? p
          : undefined;
      },
      20_000,
      'the replacement pod Ready',
    );
    const fresh = world.kubelet.poolSpirit(podKey(next))!;
    expect(fresh.etcd.pid).not.toBe(pid);
    await waitFor(
      async () =>
        (
          await call(
            fresh.apiServerUrl,
            admin.caPem,
            'GET',
            '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/poolspirit:yurthub',
            { client: admin },
          )
        ).status === 200,
      10_000,
      'bootstrap re-applied',
    );
  }, 40_000);

  it('restarts a pool-spirit whose etcd dies, reporting the pod not Ready meanwhile', async () => {
    const pod = (await poolSpiritPod(world.fleet))!;
    const before = world.kubelet.poolSpirit(podKey(pod))!;
    process.kill(before.etcd.pid, 'SIGKILL');
    await waitFor(
      async () => {
        const p = (await poolSpiritPod(world.fleet))!;
        return p.status.conditions.some((c: Obj) => c.type === 'Ready' && c.status === 'False');
      },
      10_000,
      'the pod reported not Ready',
    );
    const restarted = await waitFor(
      async () => {
        const p = (await poolSpiritPod(world.fleet))!;
        return p.status.conditions.some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      },
      20_000,
      'the pod Ready again',
    );
    expect(restarted.metadata.name).toBe(pod.metadata.name);
    // The pod's processes restart together, so every container's restartCount moves as one. It moves by 1
    // unless a start failed on the way back (a port taken by a test running alongside, between the kubelet
    // picking it and etcd binding it, is one such): every restart is a Warning Event on the pod, and the first
    // since the kill is etcd's death.
    const restartsBefore = pod.status.containerStatuses[0].restartCount as number;
    const restarts = restarted.status.containerStatuses.map((c: Obj) => c.restartCount);
    expect(new Set(restarts).size, `restartCount of each container: ${restarts}`).toBe(1);
    expect(restarts[0]).toBeGreaterThan(restartsBefore);
    const events = await restartEvents(host, pod.metadata.name, { atLeast: restarts[0] });
    expect(events, events.map((e) => `${e.reason}: ${e.message}`).join('\n')).toHaveLength(restarts[0]);
    expect(events[restartsBefore]).toMatchObject({
      type: 'Warning',
      reason: 'BackOff',
      involvedObject: { fieldPath: 'spec.containers{etcd}' },
    });
    const after = world.kubelet.poolSpirit(podKey(pod))!;
    expect(after.etcd.pid).not.toBe(before.etcd.pid);
    // The old incarnation is fully gone: its processes have exited, and its data dir was removed. (Its API's
    // port may already belong to the new incarnation, still starting, so the port alone proves nothing.)
    for (const [name, pid] of [
      ['kube-apiserver', before.apiServer.pid],
      ['etcd', before.etcd.pid],
    ] as const)
      expect(() => process.kill(pid, 0), `${name} ${pid}`).toThrow(/ESRCH/);
    if (before.apiServerUrl !== after.apiServerUrl) {
      await expect(call(before.apiServerUrl, admin.caPem, 'GET', '/readyz')).rejects.toThrow(/ECONNREFUSED/);
    }
    expect(existsSync(before.etcd.dataDir)).toBe(false);
  }, 40_000);

  it('leaves no process and no data behind on kubelet stop()', async () => {
    const running = world.kubelet.poolSpirits();
    expect(running.length).toBe(1);
    await world.kubelet.stop();
    for (const r of running) {
      expect(alive(r.etcd.pid)).toBe(false);
      expect(existsSync(r.etcd.dataDir)).toBe(false);
      await expect(call(r.apiServerUrl, admin.caPem, 'GET', '/readyz')).rejects.toThrow(/ECONNREFUSED/);
    }
    expect(world.kubelet.poolSpirits()).toEqual([]);
  }, 20_000);
});
