import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../../adapters/state-table/keys.ts';
import { localDynamoClient } from '../../../dev/local/dynamodb.ts';
import { KUBECTL } from '../../../dev/local/kube-bins/index.ts';
import { waitFor } from '../../support/wait.ts';
import { isConverged, type LocalUpChild, ROOT, readStackEnv, startLocalUp } from './local-up-child.ts';

const run = promisify(execFile);
const CLUSTERS = ['cluster-01', 'cluster-02'];

/**
 * `local up --store etcd --state-dir D`, killed with -9 and started again with the same flags, resumes:
 * the clusters' objects (etcd under D), their registrations and the rest of the state table (dynalite under
 * D), and a rollout in progress; the fleet converges again without a duplicate object.
 */
describe('local up resumes after kill -9', () => {
  let dir: string;
  let first: LocalUpChild | undefined;
  let second: LocalUpChild | undefined;
  const args = () => [
    '--store',
    'etcd',
    '--state-dir',
    dir,
    '--clusters',
    '2',
    '--pools',
    '2',
    '--nodes-per-pool',
    '1',
    '--cloud-pools',
    '0',
    '--ready-delay',
    '20',
  ];
  const env = () => ({ ...process.env, ...readStackEnv(join(dir, 'env')) });
  const spiritctl = async (...a: string[]) =>
    (await run(process.execPath, ['cli/main.ts', ...a], { cwd: ROOT, env: env() })).stdout;
  const kubectl = async (cluster: string, ...a: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', join(dir, 'kubeconfigs', `${cluster}.kubeconfig`), ...a])).stdout;
  const tableKeys = async () => {
    const client = localDynamoClient(env().SPIRITCTL_DYNAMO_ENDPOINT!);
    try {
      const out = await client.send(new ScanCommand({ TableName: 'pool-spirit-local-state' }));
      return (out.Items ?? []).map((i) => `${i.pk.S} ${i.sk.S}`).sort();
    } finally {
      client.destroy();
    }
  };
  /** Every object the product and the seed made, by kind/name and uid: a recreated or duplicated one shows. */
  const objects = async (cluster: string) =>
    (
      await kubectl(
        cluster,
        'get',
        'nodepools,nodes,poolspirits,deployments,pods,secrets,configmaps',
        '-A',
        '-o',
        'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.uid}{"\\n"}{end}',
      )
    )
      .trim()
      .split('\n')
      .sort();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-resume-'));
  });
  afterAll(async () => {
    await first?.kill9();
    await second?.kill9();
    await rm(dir, { recursive: true, force: true });
  });

  it('brings back the clusters, the table and a rollout, and converges with no duplicates', async () => {
    first = startLocalUp(args());
    await first.waitForLine(isConverged, 150_000, 'first start converged');
    expect(first.lines.some((l) => /^state kept in /.test(l.message ?? ''))).toBe(true);
    await spiritctl(
      'rollout',
      'start',
      '--id',
      'resume-test',
      '--version',
      '0.2.0',
      '--canary',
      'cluster-01',
      '--soak',
      '1h',
    );
    // The canary's pool-spirits get the new version and roll; wait until the fleet is Available again.
    await waitFor(
      async () =>
        (await kubectl('cluster-01', 'get', 'poolspirits', '-o', 'jsonpath={.items[*].spec.version}')) ===
        '0.2.0 0.2.0',
      60_000,
      'canary at 0.2.0',
    );
    // Converged again, read from the clusters themselves: `local up --json` prints "converged" only on a change
    // of state it samples, and a fleet that rolls and settles between two samples prints none.
    const settledAt = (cluster: string) =>
      kubectl(
        cluster,
        'get',
        'poolspirits',
        '-o',
        'jsonpath={range .items[*]}{.metadata.generation}={.status.observedGeneration}={.status.conditions[?(@.type=="Available")].status}{"\\n"}{end}',
      );
    await waitFor(
      async () => {
        for (const cluster of CLUSTERS) {
          const rows = (await settledAt(cluster)).trim().split('\n');
          const whole = rows.length > 0 && rows.every((r) => /^(\d+)=\1=True$/.test(r));
          if (!whole) return false;
        }
        return true;
      },
      120_000,
      'every PoolSpirit Available at its generation, the canary at 0.2.0',
    );
    const rolloutBefore = JSON.parse(await spiritctl('rollout', 'status', 'resume-test', '--json'));
    const keysBefore = await tableKeys();
    const objectsBefore = Object.fromEntries(await Promise.all(CLUSTERS.map(async (c) => [c, await objects(c)])));

    await first.kill9();
    const killedAt = Date.now();
    second = startLocalUp(args());
    const converged = await second.waitForLine(isConverged, 150_000, 'resumed and converged');
    console.log(`resume after kill -9: converged ${((converged.at - killedAt) / 1000).toFixed(1)} s after the kill`);

    expect(second.lines.some((l) => l.message === `resuming 2 cluster(s) kept in ${dir}`)).toBe(true);
    expect(second.lines.filter((l) => / resumed at http/.test(l.message ?? ''))).toHaveLength(2);
    // Table: every item is back (registrations, pools, leases, the rollout); new ones may have been added since.
    const keysAfter = await tableKeys();
    expect(keysAfter).toEqual(expect.arrayContaining(keysBefore));
    for (const c of CLUSTERS) expect(keysAfter).toContain(`${keys.cluster(c).pk} ${keys.cluster(c).sk}`);
    for (const c of CLUSTERS)
      expect(keysAfter).toContain(`${keys.pool(c, 'pool-00').pk} ${keys.pool(c, 'pool-00').sk}`);
    const rolloutAfter = JSON.parse(await spiritctl('rollout', 'status', 'resume-test', '--json'));
    expect(rolloutAfter).toMatchObject({
      id: 'resume-test',
      phase: rolloutBefore.phase,
      createdAt: rolloutBefore.createdAt,
      spec: rolloutBefore.spec,
    });
    expect(rolloutAfter.clusters.map((c: { id: string }) => c.id)).toEqual(['cluster-01', 'cluster-02']);
    // Clusters: the same objects with the same uids, none recreated, none doubled.
    for (const c of CLUSTERS) expect(await objects(c)).toEqual(objectsBefore[c]);
    expect(await kubectl('cluster-01', 'get', 'poolspirits', '-o', 'jsonpath={.items[*].spec.version}')).toBe(
      '0.2.0 0.2.0',
    );

    // The resumed stack works, not only reads back: a new pool on a resumed cluster converges.
    await kubectl('cluster-02', 'apply', '-f', join(ROOT, 'test/cli/commands/fixtures/shop-17.yaml'));
    await spiritctl('local', 'nodes', 'add', '--cluster', 'cluster-02', '--pool', 'shop-17');
    await kubectl('cluster-02', 'wait', '--for=create', 'poolspirit/shop-17', '--timeout=60s');
    await kubectl('cluster-02', 'wait', '--for=condition=Available', 'poolspirit/shop-17', '--timeout=60s');
  }, 400_000);
});
