import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../../cli/command.ts';
import { dlqCommand, testPatternCommand } from '../../../cli/commands/events.ts';
import { appendDeadLetter } from '../../../dev/local/bus/dlq-store.ts';
import { judgeWithEventRuler } from '../../../dev/local/bus/judge/event-ruler.ts';
import type { DeadLetter } from '../../../dev/local/bus/types.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'cli-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

// Each spawn pays spiritctl's whole start-up (every command module is imported), so the cases are few, run in
// parallel, and get room for a loaded machine.
const SPAWN_TIMEOUT_MS = 150_000;
async function spiritctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['node', 'cli/main.ts', ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const event = file(
  'event.json',
  JSON.stringify({ source: 'pool-spirit.forwarder', detail: { changeType: 'ADDED', generation: 4 } }),
);

describe('spiritctl events test-pattern', () => {
  it(
    'prints the result and exits 0; exits 2 with the reason for an invalid pattern',
    async () => {
      const yes = file(
        'yes.json',
        JSON.stringify({ source: ['pool-spirit.forwarder'], detail: { generation: [{ numeric: ['>', 3] }] } }),
      );
      const invalid = file('invalid.json', JSON.stringify({ detail: { generation: [{ numeric: ['>', 'three'] }] } }));
      const [ok, bad] = await Promise.all([
        spiritctl('events', 'test-pattern', '--pattern', yes, '--event', event),
        spiritctl('events', 'test-pattern', '--pattern', invalid, '--event', event),
      ]);
      expect(ok).toMatchObject({ code: 0, stdout: 'true\n' });
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toMatch(
        /invalid\.json: invalid event pattern at detail\.generation\[0\]\.numeric\[1\]: the value after ">" must be a number/,
      );
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe('spiritctl events test-pattern agrees with event-ruler', () => {
  it(
    'refuses (exit 2, with the reason) a pattern event-ruler refuses, and matches with an operator only event-ruler documents',
    async () => {
      // 0.10000000000000000001 is no double: event-ruler cannot compare by it (JSON.parse would read 0.1).
      const refusedText = '{"detail": {"generation": [{"numeric": [">", 0.10000000000000000001]}]}}';
      const exactlyText = JSON.stringify({ source: [{ exactly: 'pool-spirit.forwarder' }] });
      const eventText = JSON.stringify({
        source: 'pool-spirit.forwarder',
        detail: { changeType: 'ADDED', generation: 4 },
      });
      const [judged, refused, exactly] = await Promise.all([
        judgeWithEventRuler([
          { id: 0, pattern: refusedText, event: eventText },
          { id: 1, pattern: exactlyText, event: eventText },
        ]),
        spiritctl('events', 'test-pattern', '--pattern', file('refused.json', refusedText), '--event', event),
        spiritctl('events', 'test-pattern', '--pattern', file('exactly.json', exactlyText), '--event', event),
      ]);
      expect(judged[0]).toMatchObject({ valid: false });
      expect(judged[1]).toMatchObject({ valid: true, match: true });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(
        /refused\.json: invalid event pattern at detail\.generation\[0\]\.numeric\[1\]: 0\.10000000000000000001 cannot be compared/,
      );
      expect(exactly).toMatchObject({ code: 0, stdout: 'true\n' });
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe('spiritctl events test-pattern bounds its input', () => {
  const STACK_TRACE = /^\s+at .+[:(]\d+:\d+\)?$/m;
  // The real binary, killed after 30 s: an unbounded read of /dev/zero would run into the timeout (or out of memory).
  async function bin(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return run(process.execPath, [join(ROOT, 'bin', 'spiritctl.mjs'), ...args], { cwd: ROOT, timeout: 30_000 }).then(
      (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
      (err: { code?: number; killed?: boolean; stdout?: string; stderr?: string }) => ({
        code: err.killed ? null : (err.code ?? null),
        stdout: err.stdout ?? '',
        stderr: err.stderr ?? '',
      }),
    );
  }

  it('refuses /dev/zero for --pattern and --event and a 20,000-deep pattern with exit 2 and the flag; a normal pattern still matches', async () => {
    const deep = file('deep-pattern.json', `${'{"detail":'.repeat(20_000)}{"a":[1]}${'}'.repeat(20_000)}`);
    const yes = file('bounded-yes.json', JSON.stringify({ source: ['pool-spirit.forwarder'] }));
    const [zeroPattern, zeroEvent, deepPattern, ok] = await Promise.all([
      bin('events', 'test-pattern', '--pattern', '/dev/zero', '--event', event),
      bin('events', 'test-pattern', '--pattern', yes, '--event', '/dev/zero'),
      bin('events', 'test-pattern', '--pattern', deep, '--event', event),
      bin('events', 'test-pattern', '--pattern', yes, '--event', event),
    ]);
    expect(zeroPattern.code).toBe(2);
    expect(zeroPattern.stderr).toMatch(
      /--pattern: \/dev\/zero is over 262144 bytes \(the limit for a pattern or event file\), or never ends/,
    );
    expect(zeroEvent.code).toBe(2);
    expect(zeroEvent.stderr).toMatch(/--event: \/dev\/zero is over 262144 bytes/);
    expect(deepPattern.code).toBe(2);
    expect(deepPattern.stderr).toMatch(
      /--pattern: .*deep-pattern\.json is nested deeper than 64 levels \(the limit is 64\)/,
    );
    for (const r of [zeroPattern, zeroEvent, deepPattern]) {
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toMatch(/Maximum call stack|RangeError/);
      expect(r.stderr).not.toMatch(STACK_TRACE);
      // Said once (the other line is the CLI's usual "Run ... --help" hint).
      expect(r.stderr.match(/ is (over|nested deeper)/g)).toHaveLength(1);
    }
    expect(ok).toMatchObject({ code: 0, stdout: 'true\n' });
  }, 60_000);

  it('refuses a 20,000-deep event in process, naming --event', async () => {
    const deepEvent = file('deep-event.json', `${'{"detail":'.repeat(20_000)}1${'}'.repeat(20_000)}`);
    const yes = file('bounded-yes2.json', JSON.stringify({ source: ['pool-spirit.forwarder'] }));
    await expect(
      testPatternCommand.run({ values: { pattern: yes, event: deepEvent }, positionals: [] }),
    ).rejects.toThrow(/--event: .*deep-event\.json is nested deeper than 64 levels/);
  });
});

const sampleDeadLetter: DeadLetter = {
  eventId: 'e-1',
  rule: 'reconcile-rule-1',
  eventBus: 'default',
  target: 'reconcile',
  deadLetterQueueArn: null,
  reason: 'retries-exhausted',
  error: 'apiserver unavailable',
  attempts: 3,
  firstAttemptAt: '2026-01-01T00:00:00.000Z',
  failedAt: '2026-01-01T00:00:07.000Z',
  event: {
    version: '0',
    id: 'e-1',
    'detail-type': 'Cluster Change Notice',
    source: 'pool-spirit.forwarder',
    account: '0',
    time: '2026-01-01T00:00:00Z',
    region: 'eu-west-1',
    resources: [],
    detail: {},
  },
};

async function captureStdout(
  fn: () => Promise<number | undefined>,
): Promise<{ code: number | undefined; stdout: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const code = await fn();
    return { code, stdout: out.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('spiritctl events dlq', () => {
  it(
    'lists persisted dead letters as JSON',
    async () => {
      const stateDir = join(dir, 'state');
      const dl: DeadLetter = sampleDeadLetter;
      appendDeadLetter(join(stateDir, 'dlq.jsonl'), dl);
      const json = await spiritctl('events', 'dlq', '--json', '--state-dir', stateDir);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ deadLetters: [dl], count: 1 });
    },
    SPAWN_TIMEOUT_MS,
  );
});

describe('events commands in process', () => {
  it('names a missing file', async () => {
    await expect(
      testPatternCommand.run({ values: { pattern: join(dir, 'nope.json'), event }, positionals: [] }),
    ).rejects.toThrow(/--pattern: cannot read .*nope\.json: ENOENT/);
    await expect(testPatternCommand.run({ values: { event }, positionals: [] })).rejects.toThrow(UsageError);
  });

  it('prints false for a non-matching event', async () => {
    const no = file('no.json', JSON.stringify({ detail: { changeType: [{ 'anything-but': 'ADDED' }] } }));
    const { code, stdout } = await captureStdout(() =>
      testPatternCommand.run({ values: { pattern: no, event }, positionals: [] }),
    );
    expect(code).toBe(0);
    expect(stdout).toBe('false\n');
  });

  it('names the file holding bad JSON (a usage error: exit 2)', async () => {
    const broken = file('broken.json', '{"source": [');
    await expect(testPatternCommand.run({ values: { pattern: broken, event }, positionals: [] })).rejects.toThrow(
      /--pattern: .*broken\.json is not valid JSON/,
    );
  });

  it('lists dead letters as a table, and says so when there are none', async () => {
    const stateDir = join(dir, 'table-state');
    appendDeadLetter(join(stateDir, 'dlq.jsonl'), { ...sampleDeadLetter, eventId: 'e-2' });
    const table = await captureStdout(() => dlqCommand.run({ values: { 'state-dir': stateDir }, positionals: [] }));
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/RULE\s+TARGET\s+ATTEMPTS/);
    expect(table.stdout).toMatch(
      /reconcile-rule-1\s+reconcile\s+3\s+retries-exhausted\s+Cluster Change Notice\s+e-2\s+apiserver unavailable/,
    );
    const empty = await captureStdout(() =>
      dlqCommand.run({ values: { 'state-dir': join(dir, 'empty') }, positionals: [] }),
    );
    expect(empty.stdout).toMatch(/^no dead letters/);
  });
});
