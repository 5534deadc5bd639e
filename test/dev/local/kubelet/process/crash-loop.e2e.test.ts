/**
 * A rendered flag the real kube-apiserver rejects: the pod shows it the way a crash-looping container does
 * (that container in CrashLoopBackOff, the binary's own message in lastState.terminated, restarts counted,
 * a Warning Event on the pod), and once the spec is fixed the pool comes back.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../../../adapters/kubernetes/raw-object-api.ts';
import { poolName } from '../../../../../dev/local/fleet/seed.ts';
import { type ProcessFleet, poolSpiritPod, restartEvents, startProcessFleet, waitFor } from './world.ts';

type Obj = Record<string, any>;
const POOL = poolName(0);
const SPIRIT = `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}`;

describe('process kubelet: a flag the real kube-apiserver rejects', () => {
  let world: ProcessFleet;
  let host: RawObjectApi;

  beforeAll(async () => {
    world = await startProcessFleet();
    host = RawObjectApi.fromKubeConfig(world.fleet.clusters[0].kubeConfig);
    await world.fleet.waitConverged(90_000);
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
  });

  const setExtraArgs = (extraArgs: Record<string, string> | null) =>
    host.requestJson(HttpMethod.PATCH, SPIRIT, {
      body: { spec: { apiServer: { extraArgs } } },
      contentType: 'application/merge-patch+json',
    });

  it("crash-loops that container with the binary's message, counts restarts and records a Warning Event", async () => {
    await setExtraArgs({ 'bogus-flag': 'on' });
    const pod = await waitFor(
      async () => {
        const p = await poolSpiritPod(world.fleet);
        const api = p?.status?.containerStatuses?.find((c: Obj) => c.name === 'kube-apiserver');
        return p?.spec.containers.find((c: Obj) => c.name === 'kube-apiserver').args.includes('--bogus-flag=on') &&
          api?.lastState?.terminated
          ? p
          : undefined;
      },
      90_000,
      'the new pod with the bad flag crash-looping',
    );
    const api = pod.status.containerStatuses.find((c: Obj) => c.name === 'kube-apiserver');
    expect(api.state.waiting.reason).toBe('CrashLoopBackOff');
    expect(api.lastState.terminated.exitCode).not.toBe(0);
    expect(api.lastState.terminated.message).toContain('unknown flag: --bogus-flag');
    expect(api.restartCount).toBeGreaterThanOrEqual(1);
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False' }));

    const events = await restartEvents(host, pod.metadata.name, { reasons: ['BackOff'] });
    expect(events[0]).toMatchObject({
      type: 'Warning',
      involvedObject: { kind: 'Pod', fieldPath: 'spec.containers{kube-apiserver}' },
    });
    expect(events[0].message).toContain('unknown flag: --bogus-flag');

    // The pod's change reaches a reconcile (the forwarder watches pool-spirit pods), and the PoolSpirit says why.
    const workload = await waitFor(
      async () => {
        const s = await host.requestJson<Obj>(HttpMethod.GET, SPIRIT);
        const c = s.status?.conditions?.find((x: Obj) => x.type === 'WorkloadReady');
        return c?.message?.includes('unknown flag: --bogus-flag') ? c : undefined;
      },
      30_000,
      'WorkloadReady naming the rejected flag',
    );
    expect(workload.status).toBe('False');
    expect(workload.message).toContain('container kube-apiserver is in CrashLoopBackOff');
  }, 120_000);

  it('comes back Available once the flag is removed', async () => {
    await setExtraArgs(null);
    await waitFor(
      async () => {
        const s = await host.requestJson<Obj>(HttpMethod.GET, SPIRIT);
        const p = await poolSpiritPod(world.fleet);
        const args: string[] = p?.spec.containers.find((c: Obj) => c.name === 'kube-apiserver').args ?? [];
        return (
          !args.includes('--bogus-flag=on') &&
          s.status?.conditions?.some((c: Obj) => c.type === 'Available' && c.status === 'True')
        );
      },
      120_000,
      'Available again without the flag',
    );
  }, 130_000);
});
