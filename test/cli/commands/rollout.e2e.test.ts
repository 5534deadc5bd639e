import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutFleet } from '../../functions/rollout/fleet-world.ts';
import { startRolloutFleet } from '../../functions/rollout/fleet-world.ts';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');

let fleet: RolloutFleet;
beforeAll(async () => {
  fleet = await startRolloutFleet(2, 1);
  await fleet.settle();
});
afterAll(() => fleet?.stop());

async function spiritctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const table = ['--dynamo-endpoint', fleet.dynamo.endpoint, '--table', 'rollout-test'];
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(root, 'cli/main.ts'), 'rollout', ...args, ...table], {
      cwd: root,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('spiritctl rollout', () => {
  it('starts, shows, pauses and watches a rollout to the end', async () => {
    const started = await spiritctl(
      'start',
      '--patch',
      '{"agent":{"version":"0.2.0"}}',
      '--soak',
      '0s',
      '--id',
      'cli-1',
    );
    expect(started.stderr).toBe('');
    expect(started.stdout).toMatch(/^started rollout cli-1\n/);
    expect(started.stdout).toMatch(/rollout cli-1 {2}Progressing {2}wave 1/);
    expect(started.stdout).toMatch(/c1 +1 {2}Updating/);
    expect(started.stdout).toMatch(/c2 +- {2}Pending/);

    const paused = await spiritctl('pause', 'cli-1');
    expect(paused.stdout).toMatch(/^rollout cli-1: Paused — paused by spiritctl/);

    const json = JSON.parse((await spiritctl('status', 'cli-1', '--json')).stdout);
    expect(json).toMatchObject({ id: 'cli-1', phase: 'Paused', spec: { patch: { agent: { version: '0.2.0' } } } });

    // The stand-in reconciler keeps the pools' status in step while the CLI ticks.
    let watching = true;
    const settling = (async () => {
      while (watching) await fleet.settle();
    })();
    let watched: Awaited<ReturnType<typeof spiritctl>>;
    try {
      watched = await spiritctl('resume', 'cli-1', '--watch', '--interval', '200ms');
    } finally {
      watching = false;
      await settling;
    }
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/rollout cli-1 {2}Succeeded/);
    expect(watched.stdout).toMatch(/c2 +2 {2}Succeeded/);

    const list = await spiritctl('status');
    expect(list.stdout).toMatch(/cli-1 +Succeeded/);
  }, 60_000);

  it('names the flag of a bad value and exits 2', async () => {
    const bad = await spiritctl('start', '--version', '0.2.0', '--max-concurrency', 'lots');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-concurrency: expected a whole number ≥ 1 or a percentage/);
    const none = await spiritctl('start');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give --version V or --patch JSON/);
    const missing = await spiritctl('status', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/rollout nope does not exist/);
  }, 30_000);
});
