import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendDeadLetter } from '../../../dev/local/bus/dlq-store.ts';
import type { DeadLetter } from '../../../dev/local/bus/types.ts';
import { isConverged, type LocalUpChild, ROOT, readStackEnv, startLocalUp } from './local-up-child.ts';

const run = promisify(execFile);
const SMALL = ['--clusters', '1', '--pools', '1', '--nodes-per-pool', '1', '--cloud-pools', '0', '--ready-delay', '20'];

/** What a user meets when starting `spiritctl local up`: directories, the env file, failures, an idle stack. */
describe('local up start-up', () => {
  let dir: string;
  const children: LocalUpChild[] = [];
  const localUp = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const c = startLocalUp(args, env);
    children.push(c);
    return c;
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-local-up-'));
  });
  afterAll(async () => {
    for (const c of children) await c.kill9();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a state dir it cannot create, naming the flag, and exits', async () => {
    const file = join(dir, 'not-a-dir');
    await writeFile(file, '');
    const up = localUp(['--state-dir', file, ...SMALL]);
    expect(await up.exited).toEqual({ code: 2, signal: null });
    expect(up.stderr()).toMatch(/--state-dir .*not-a-dir: cannot use it as a directory/);
  }, 60_000);

  it('stops everything it started when a later part fails (no etcd binary): the process exits, nothing listens', async () => {
    const up = localUp(['--state-dir', join(dir, 'no-etcd'), '--store', 'etcd', ...SMALL], {
      ETCD: join(dir, 'missing-etcd'),
    });
    const { code } = await up.exited;
    expect(code).toBe(1);
    expect(up.stderr()).toMatch(/missing-etcd not found or not executable/);
    // The bus and dynalite were up before the first cluster's etcd failed; the process ending on its own
    // means they were stopped (their servers would keep it alive). Their ports answer nothing now.
    const started = up.lines.find((l) => /^bus http/.test(l.message ?? ''))?.message ?? '';
    const urls = [...started.matchAll(/http:\/\/127\.0\.0\.1:\d+/g)].map((m) => m[0]);
    expect(urls).toHaveLength(2);
    for (const url of urls) await expect(fetch(url)).rejects.toThrow();
  }, 60_000);

  it('creates separate state and kubeconfig dirs, exports the state dir for events dlq, and is quiet when idle', async () => {
    const stateDir = join(dir, 'fresh', 'state');
    const kubeconfigDir = join(dir, 'elsewhere', 'kubeconfigs');
    const up = localUp(['--state-dir', stateDir, '--kubeconfig-dir', kubeconfigDir, ...SMALL]);
    await up.waitForLine(isConverged, 90_000, 'converged');
    expect(up.lines.some((l) => /state is in memory and lost on exit/.test(l.message ?? ''))).toBe(true);
    const env = readStackEnv(join(stateDir, 'env'));
    expect(env).toMatchObject({ SPIRITCTL_STATE_DIR: stateDir, SPIRITCTL_KUBECONFIG_DIR: kubeconfigDir });

    // A dead letter in the stack's state dir is what `events dlq` lists after `source <state-dir>/env`, run
    // from anywhere (here the repository, whose own .local it must not read).
    const dl: DeadLetter = {
      eventId: 'e-startup-test',
      rule: 'r',
      eventBus: 'b',
      target: 'reconcile',
      deadLetterQueueArn: null,
      reason: 'retries-exhausted',
      error: 'boom',
      attempts: 3,
      firstAttemptAt: new Date().toISOString(),
      failedAt: new Date().toISOString(),
      event: {
        version: '0',
        id: 'e-startup-test',
        'detail-type': 'x',
        source: 's',
        account: '0',
        time: new Date().toISOString(),
        region: 'local',
        resources: [],
        detail: {},
      },
    };
    appendDeadLetter(join(stateDir, 'dlq.jsonl'), dl);
    const { stdout } = await run(process.execPath, ['cli/main.ts', 'events', 'dlq', '--json'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    expect(JSON.parse(stdout).deadLetters.map((d: DeadLetter) => d.eventId)).toEqual(['e-startup-test']);

    // Idle and converged: nothing is printed. The window spans a sim leader renewal (every 30 s), which
    // moves the event counters but not the fleet's state. Observing a window is the point, so it is a wait.
    const watching = await up.waitForLine(
      (l) => l.message === 'watching for changes; Ctrl-C to stop',
      10_000,
      'watching',
    );
    const from = up.lines.indexOf(watching) + 1;
    await new Promise((r) => setTimeout(r, 31_000));
    expect(up.lines.slice(from)).toEqual([]);
  }, 180_000);
});
