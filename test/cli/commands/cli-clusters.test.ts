import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStateTable, getCluster } from '../../../adapters/state-table/index.ts';
import { type Command, parseCommandArgs, UsageError } from '../../../cli/command.ts';
import { clustersAdd, clustersLabel, clustersList, clustersRemove } from '../../../cli/commands/clusters.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { kubeconfigYaml } from '../../../dev/local/kube-api/index.ts';
import { generateClusterCaPem } from '../../functions/reconcile/harness.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..', '..');
const TABLE = 'cli-test-state';

describe('spiritctl clusters', () => {
  let dynamo: LocalDynamo;
  let dir: string;
  let flags: string[];

  /** Runs a command in process as cli/main.ts does: usage errors exit 2 with the message on stderr. */
  async function cli(cmd: Command, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const out = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      stdout += String(s);
      return true;
    });
    const err = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      stderr += String(s);
      return true;
    });
    try {
      const parsed = parseCommandArgs(cmd, [...argv, ...flags]);
      const code = await cmd.run({ values: parsed.values as Record<string, unknown>, positionals: parsed.positionals });
      return { code: code ?? 0, stdout, stderr };
    } catch (e) {
      if (e instanceof UsageError) return { code: 2, stdout, stderr: stderr + e.message };
      throw e;
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  }

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, TABLE);
    dir = await mkdtemp(join(tmpdir(), 'ps-cli-clusters-'));
    await writeFile(join(dir, 'ca.pem'), await generateClusterCaPem());
    // Registration reads and checks the kubeconfig (inline credentials, an https or loopback server).
    await writeFile(join(dir, 'edge.kubeconfig'), kubeconfigYaml('edge-eu-1', 'https://edge-eu-1.example:6443'));
    flags = ['--dynamo-endpoint', dynamo.endpoint, '--table', TABLE];
  });
  afterAll(async () => {
    await dynamo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('adds clusters reached by kubeconfig, EKS and Secrets Manager, with labels', async () => {
    const kube = await cli(clustersAdd, [
      '--id',
      'edge-eu-1',
      '--kubeconfig',
      join(dir, 'edge.kubeconfig'),
      '--label',
      'region=eu-west-1',
      '--label',
      'rollout-group=canary',
    ]);
    expect(kube).toMatchObject({ code: 0 });
    expect(kube.stdout).toContain('cluster edge-eu-1 registered: kubeconfig ');
    const eks = await cli(clustersAdd, [
      '--id',
      'shop-eu',
      '--eks',
      'shop-eu',
      '--region',
      'eu-west-1',
      '--endpoint',
      'https://abc.gr7.eu-west-1.eks.amazonaws.com',
      '--ca-file',
      join(dir, 'ca.pem'),
      '--label',
      'environment=prod',
    ]);
    expect(eks).toMatchObject({ code: 0 });
    expect(
      (await cli(clustersAdd, ['--id', 'edge-us', '--secret', 'pool-spirit/dev/edge-us', '--region', 'us-east-1']))
        .code,
    ).toBe(0);
    const table = createStateTable({ client: dynamo.client, tableName: TABLE });
    const stored = await getCluster(table, 'shop-eu');
    expect(stored?.access).toMatchObject({ kind: 'eks', clusterName: 'shop-eu', region: 'eu-west-1' });
    expect(Buffer.from((stored!.access as { caData: string }).caData, 'base64').toString()).toContain(
      'BEGIN CERTIFICATE',
    );
    expect((await getCluster(table, 'edge-eu-1'))?.access).toMatchObject({
      kind: 'kubeconfig-file',
      path: join(dir, 'edge.kubeconfig'),
    });
  });

  it('refuses bad input with the flag and what was expected', async () => {
    expect(await cli(clustersAdd, ['--id', 'x', '--kubeconfig', 'a', '--url', 'http://b'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/exactly one of .* \(got --kubeconfig, --url\)/),
    });
    expect(await cli(clustersAdd, ['--id', 'x', '--eks', 'x', '--endpoint', 'https://x'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--region is required with --eks/),
    });
    expect(await cli(clustersAdd, ['--id', 'Bad_Id', '--url', 'http://127.0.0.1:1'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/id: expected a DNS label/),
    });
    expect(await cli(clustersAdd, ['--id', 'x', '--url', 'http://127.0.0.1:1', '--label', 'novalue'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--label expects key=value/),
    });
    expect(await cli(clustersAdd, ['--id', 'edge-eu-1', '--url', 'http://127.0.0.1:1'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/already registered \(use --replace/),
    });
  });

  it('lists as a table and as JSON, optionally by label', async () => {
    const text = await cli(clustersList, []);
    expect(text.stdout).toMatch(/^ID\s+ACCESS\s+LABELS\s+UPDATED/);
    expect(text.stdout).toMatch(/edge-eu-1\s+kubeconfig .*region=eu-west-1,rollout-group=canary/);
    expect(text.stdout).toMatch(/shop-eu\s+eks shop-eu \(eu-west-1\)\s+environment=prod/);
    expect(text.stdout).toContain('3 cluster(s)');
    const json = JSON.parse((await cli(clustersList, ['--json', '--selector', 'rollout-group=canary'])).stdout);
    expect(json.count).toBe(1);
    expect(json.clusters[0].id).toBe('edge-eu-1');
  });

  it('sets and removes labels, and removes clusters', async () => {
    expect((await cli(clustersLabel, ['edge-eu-1', 'rollout-group=wave-1', 'environment=prod'])).stdout).toContain(
      'environment=prod,region=eu-west-1,rollout-group=wave-1',
    );
    expect((await cli(clustersLabel, ['edge-eu-1', 'rollout-group-'])).stdout).toContain(
      'labels: environment=prod,region=eu-west-1\n',
    );
    expect(await cli(clustersLabel, ['nope', 'a=b'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('cluster nope is not registered'),
    });
    expect(await cli(clustersRemove, ['edge-us'])).toMatchObject({ code: 0, stdout: 'cluster edge-us removed\n' });
    expect(await cli(clustersRemove, ['edge-us'])).toMatchObject({ code: 1 });
  });

  it('records the OpenYurt release an operator declares, keeps it across label changes, drops it on a replace without it', async () => {
    const kubeconfig = join(dir, 'edge.kubeconfig');
    const add = (extra: string[]) => cli(clustersAdd, ['--id', 'edge-v161', '--kubeconfig', kubeconfig, ...extra]);
    expect(await add(['--openyurt-release', 'v1.6'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('openYurtRelease: expected a release like v1.5.1'),
    });
    expect((await add(['--openyurt-release', 'v1.6.1'])).code).toBe(0);
    const table = createStateTable({ client: dynamo.client, tableName: TABLE });
    expect((await getCluster(table, 'edge-v161'))?.openYurtRelease).toBe('v1.6.1');
    expect((await cli(clustersLabel, ['edge-v161', 'region=eu'])).code).toBe(0);
    expect((await getCluster(table, 'edge-v161'))?.openYurtRelease).toBe('v1.6.1');
    expect((await add(['--replace'])).code).toBe(0);
    expect((await getCluster(table, 'edge-v161'))?.openYurtRelease).toBeUndefined();
    expect((await cli(clustersRemove, ['edge-v161'])).code).toBe(0);
  });

  it('is wired into spiritctl', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(repoRoot, 'cli', 'main.ts'), 'clusters', 'list', '--json', ...flags],
      { cwd: repoRoot },
    );
    expect(JSON.parse(stdout).clusters.map((c: { id: string }) => c.id)).toEqual(['edge-eu-1', 'shop-eu']);
  }, 30_000);
});
