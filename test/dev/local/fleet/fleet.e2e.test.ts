import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalFleet, startLocalFleet } from '../../../../dev/local/fleet/fleet.ts';
import { KUBECTL } from '../../../../dev/local/kube-bins/index.ts';
import { waitFor } from '../../../support/local-cluster.ts';

const run = promisify(execFile);

/** `spiritctl local up` as a library: the whole system on loopback, judged with the real kubectl. */
describe('local fleet: 2 clusters × 3 pools', () => {
  let fleet: LocalFleet;
  let dir: string;
  const kubectl = async (cluster: number, ...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', fleet.clusters[cluster].kubeconfigPath, ...args])).stdout;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-fleet-'));
    // One worker thread for the reconcile containers, as `spiritctl local up` runs them by default.
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 3,
      nodesPerPool: 2,
      cloudPools: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      functionThreads: 1,
    });
  }, 60_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('converges every edge pool to Available and gives the Cloud pool nothing', async () => {
    const p = await fleet.waitConverged(90_000);
    expect(p.clusters.map((c) => [c.wanted, c.available])).toEqual([
      [3, 3],
      [3, 3],
    ]);
    const names = (await kubectl(0, 'get', 'poolspirits', '-o', 'jsonpath={.items[*].metadata.name}'))
      .split(' ')
      .sort();
    expect(names).toEqual(['pool-00', 'pool-01', 'pool-02']);
    expect(fleet.bus.deadLetters()).toEqual([]);
    // The reconciles ran in containers in the worker thread, through the same LocalFunction limits.
    expect(fleet.reconcile.stats.invocations).toBeGreaterThan(0);
    expect(fleet.reconcile.stats.errors).toBe(0);
  }, 120_000);

  it('converges a NodePool created with kubectl, and leaves nothing when it is deleted with kubectl', async () => {
    const manifest = join(dir, 'pool.yaml');
    await writeFile(
      manifest,
      'apiVersion: apps.openyurt.io/v1beta1\nkind: NodePool\nmetadata:\n  name: shop-17\nspec:\n  type: Edge\n',
    );
    await writeFile(
      join(dir, 'node.yaml'),
      [
        'apiVersion: v1',
        'kind: Node',
        'metadata:',
        '  name: shop-17-node-0',
        '  labels:',
        '    apps.openyurt.io/nodepool: shop-17',
        '',
      ].join('\n'),
    );
    await kubectl(1, 'apply', '-f', manifest);
    await kubectl(1, 'apply', '-f', join(dir, 'node.yaml'));
    const statusPatch = JSON.stringify({
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: new Date().toISOString() },
        ],
      },
    });
    await kubectl(1, 'patch', 'node', 'shop-17-node-0', '--subresource=status', '--type=merge', '-p', statusPatch);
    // The reconciler creates the PoolSpirit after the NodePool event reaches it: `wait --for=condition` on an
    // object that does not exist yet fails with NotFound at once, so wait for its creation first.
    await kubectl(1, 'wait', '--for=create', 'poolspirit/shop-17', '--timeout=60s');
    await kubectl(1, 'wait', '--for=condition=Available', 'poolspirit/shop-17', '--timeout=60s');
    expect(
      await kubectl(
        1,
        'get',
        'deployment',
        '-n',
        'pool-spirit-system',
        '-l',
        'poolspirit.io/pool=shop-17',
        '-o',
        'name',
      ),
    ).toMatch(/deployment/);

    await kubectl(1, 'delete', 'nodepool', 'shop-17', '--wait=true');
    await waitFor(
      async () => {
        const left = await kubectl(
          1,
          'get',
          'poolspirits,deployments,services,secrets,configmaps,serviceaccounts,roles,rolebindings',
          '-A',
          '-l',
          'poolspirit.io/pool=shop-17',
          '-o',
          'name',
          '--ignore-not-found',
        );
        const clusterRbac = await kubectl(1, 'get', 'clusterroles,clusterrolebindings', '-o', 'name');
        const spirit = await kubectl(1, 'get', 'poolspirit', 'shop-17', '-o', 'name', '--ignore-not-found');
        return left.trim() === '' && spirit.trim() === '' && !clusterRbac.includes('shop-17');
      },
      30_000,
      'everything of shop-17 gone',
    );
  }, 120_000);
});
