/**
 * A pool with no Ready node: its PoolSpirit says so, naming the pool and the scheduler's reason, instead of
 * "the pod is not ready" — and it becomes Available once the pool gets a Ready node.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { edgeNode, poolName } from '../../../dev/local/fleet/seed.ts';
import { waitFor } from '../../support/wait.ts';

type Obj = Record<string, any>;
const POOL = poolName(0);

describe('a pool with no Ready node', () => {
  let fleet: LocalFleet;
  let dir: string;
  let api: RawObjectApi;
  const workloadReady = async () =>
    (
      (await api.requestJson<Obj>(HttpMethod.GET, `/apis/poolspirit.io/v1alpha1/poolspirits/${POOL}`)).status
        ?.conditions ?? []
    ).find((c: Obj) => c.type === 'WorkloadReady');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-unschedulable-'));
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 1,
      nodesPerPool: 0,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      controlPlane: 'real',
    });
    api = RawObjectApi.fromKubeConfig(fleet.clusters[0].kubeConfig);
  }, 60_000);
  afterAll(async () => {
    await fleet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('says the pod cannot be scheduled and what the pool needs', async () => {
    const c = await waitFor(
      async () => {
        const w = await workloadReady();
        return w?.reason === 'Unschedulable' ? w : undefined;
      },
      20_000,
      'WorkloadReady Unschedulable',
    );
    expect(c.status).toBe('False');
    expect(c.message).toMatch(
      new RegExp(
        // kube-scheduler's words: with no node in the cluster at all, or with nodes that do not fit.
        `^no node can run the pool-spirit pod: NodePool ${POOL} needs a Ready node that fits it \\(scheduler: (no nodes available to schedule pods|0/\\d+ nodes are available)`,
      ),
    );
  }, 30_000);

  it('becomes Available once the pool has a Ready node', async () => {
    await api.createJson(edgeNode(`${POOL}-node-late`, POOL));
    await fleet.waitConverged(30_000);
    expect((await workloadReady())?.status).toBe('True');
  }, 40_000);
});
