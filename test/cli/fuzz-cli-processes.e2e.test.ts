/**
 * The same contract as fuzz-cli.test.ts, through real processes: `bin/spiritctl.mjs` with a bad argument
 * exits 2 with a message naming the flag, and prints no stack trace. Only one case opens the state table
 * (loading the AWS SDK costs seconds per process); the in-process fuzzing covers those flags in bulk.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDynamo, startFakeDynamo } from '../support/fake-dynamo.ts';

const exec = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..');
const STACK_TRACE = /^\s+at .+[:(]\d+:\d+\)?$/m;
const TABLE = 'fuzz-cli-table';
const PARALLEL = 4;

describe('spiritctl processes with bad arguments', () => {
  let dynamo: FakeDynamo;
  beforeAll(async () => {
    dynamo = await startFakeDynamo(TABLE);
  });
  afterAll(async () => {
    await dynamo?.stop();
  });

  it('exit 2 with a message naming the flag and no stack trace (23 commands)', async () => {
    const state = () => ['--dynamo-endpoint', dynamo.endpoint, '--table', TABLE];
    const cases: [string[], string][] = [
      [['rollout', 'start', '--version', '0.2.0', '--soak', '5 minutes', ...state()], '--soak'],
      [['rollout', 'start', '--version', '0.2.0', '--patch', 'null'], '--patch'],
      [['rollout', 'start', '--version', '0.2.0', '--dynamo-endpoint', ''], '--dynamo-endpoint'],
      [['rollout', 'start', '--version', '0.2.0', '--selector', 'region'], '--selector'],
      [['rollout', 'start', '--patch', '{"agent":'], '--patch'],
      // Unbounded or deeply nested input is refused, not read forever or recursed into.
      [['rollout', 'start', '--patch', '@/dev/zero'], '--patch'],
      [['rollout', 'start', '--patch', `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`], '--patch'],
      [['rollout', 'start', '--version', '0.2.0', '--table', 'x'], '--table'],
      [['rollout', 'start', '--version', '0.2.0', '--dynamo-endpoint', 'localhost:8000'], '--dynamo-endpoint'],
      [['rollout', 'pause', '--no-such-flag'], '--no-such-flag'],
      [['rollout', 'start', '--soak'], '--soak'],
      [['rollout', 'abort', 'r1', '--json=yes'], '--json'],
      [['local', 'up', '--clusters', 'many'], '--clusters'],
      [['local', 'up', '--pools', '-1'], '--pools'],
      [['local', 'up', '--store', 'disk'], '--store'],
      [['local', 'up', '--ready-delay', '1e3'], '--ready-delay'],
      [['local', 'cluster', '--port', '70000'], '--port'],
      [['local', 'cluster', '--name', 'Not A Label'], '--name'],
      [['clusters', 'list', '--selector', '=v'], '--selector'],
      [['clusters', 'add', '--label'], '--label'],
      [['probe', 'leaders', '--cluster', 'UPPER_CASE'], '--cluster'],
      [['audit', '--💥'], '--💥'],
      [['forwarder', '--kubeconfig'], '--kubeconfig'],
    ];
    const results: { argv: string[]; flag: string; code: number; stderr: string }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < cases.length) {
          const [argv, flag] = cases[next++];
          const r = await exec(process.execPath, [join(repoRoot, 'bin', 'spiritctl.mjs'), ...argv], {
            cwd: repoRoot,
            timeout: 30_000,
          }).then(
            (ok) => ({ code: 0, stderr: ok.stderr }),
            (err: { code?: number; stderr?: string }) => ({
              code: typeof err.code === 'number' ? err.code : -1,
              stderr: err.stderr ?? '',
            }),
          );
          results.push({ argv, flag, ...r });
        }
      }),
    );
    const bad = results
      .filter((r) => !(r.code === 2 && r.stderr.includes(r.flag) && !STACK_TRACE.test(r.stderr)))
      .map((r) => `spiritctl ${r.argv.join(' ')} → exit ${r.code}: ${r.stderr.slice(0, 300)}`);
    expect(bad).toEqual([]);
    expect(results).toHaveLength(cases.length);
  }, 90_000);
});
