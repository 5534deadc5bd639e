import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { writeStackEnv } from '../../../dev/local/fleet/state-dir.ts';
import { KUBECTL } from '../../../dev/local/kube-bins/index.ts';
import { ROOT } from './local-up-child.ts';

const run = promisify(execFile);

/** The README's example: a NodePool made with kubectl becomes Available once `local nodes add` gives it nodes. */
describe('spiritctl local nodes add', () => {
  let fleet: LocalFleet;
  let dir: string;
  let env: Record<string, string>;
  const kubectl = async (...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', fleet.clusters[0].kubeconfigPath, ...args])).stdout;
  const spiritctl = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(process.execPath, ['cli/main.ts', 'local', 'nodes', 'add', ...args], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-nodes-'));
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
    });
    // What `local up` writes and the user sources.
    env = await writeStackEnv(fleet.state, {
      dynamoEndpoint: fleet.dynamo.endpoint,
      busEndpoint: fleet.bus.endpoint,
      eventBusName: fleet.eventBusName,
    });
    await fleet.waitConverged(90_000);
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gives a new NodePool Ready nodes, and its pool-spirit becomes Available on them', async () => {
    await run(KUBECTL, [
      '--kubeconfig',
      fleet.clusters[0].kubeconfigPath,
      'apply',
      '-f',
      join(ROOT, 'test/cli/commands/fixtures/shop-17.yaml'),
    ]);
    await kubectl('wait', '--for=create', 'poolspirit/shop-17', '--timeout=60s');
    // No node in the pool: the pool-spirit cannot be placed, so it is not Available.
    expect(
      await kubectl(
        'get',
        'poolspirit',
        'shop-17',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Available")].status}',
      ),
    ).not.toBe('True');

    const added = await spiritctl('--cluster', 'cluster-01', '--pool', 'shop-17', '--count', '2');
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toMatch(
      /added 2 Ready node\(s\) to NodePool shop-17 in cluster-01: shop-17-node-0, shop-17-node-1/,
    );
    const nodes = await kubectl(
      'get',
      'nodes',
      '-l',
      'apps.openyurt.io/nodepool=shop-17',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}',
    );
    expect(nodes.trim().split(' ').sort()).toEqual(['shop-17-node-0=True', 'shop-17-node-1=True']);
    await kubectl('wait', '--for=condition=Available', 'poolspirit/shop-17', '--timeout=60s');
    const pods = await kubectl(
      'get',
      'pods',
      '-n',
      'pool-spirit-system',
      '-l',
      'poolspirit.io/pool=shop-17',
      '-o',
      'jsonpath={.items[*].spec.nodeName}',
    );
    expect(pods).toMatch(/^shop-17-node-[01]$/);

    // More nodes continue the names.
    expect((await spiritctl('--cluster', 'cluster-01', '--pool', 'shop-17')).stdout).toMatch(/: shop-17-node-2\n$/);
  }, 150_000);

  it('names the flag that is wrong', async () => {
    const [noCluster, unknownCluster, unknownPool, badCount] = await Promise.all([
      spiritctl('--pool', 'shop-17'),
      spiritctl('--cluster', 'cluster-07', '--pool', 'shop-17'),
      spiritctl('--cluster', 'cluster-01', '--pool', 'shop-99'),
      spiritctl('--cluster', 'cluster-01', '--pool', 'shop-17', '--count', '0'),
    ]);
    expect(noCluster).toMatchObject({ code: 2, stderr: expect.stringMatching(/--cluster is required/) });
    expect(unknownCluster).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /--cluster cluster-07: no kubeconfig at .*; the local stack's clusters are cluster-01/,
      ),
    });
    expect(unknownPool).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /--pool shop-99: there is no NodePool "shop-99" \(NodePools: .*pool-00.*\) in cluster-01/,
      ),
    });
    expect(badCount).toMatchObject({ code: 2, stderr: expect.stringMatching(/--count must be from 1 to 100, got 0/) });
  }, 150_000);
});
