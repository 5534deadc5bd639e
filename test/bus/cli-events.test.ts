import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { appendDeadLetter } from '../../local/bus/dlq-store.ts';
import type { DeadLetter } from '../../local/bus/types.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'cli-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function spiritctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('npx', ['node', 'cli/main.ts', ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const event = file('event.json', JSON.stringify({ source: 'pool-spirit.forwarder', detail: { changeType: 'ADDED', generation: 4 } }));

describe('spiritctl events test-pattern', () => {
  it('prints true or false and exits 0', async () => {
    const yes = file('yes.json', JSON.stringify({ source: ['pool-spirit.forwarder'], detail: { generation: [{ numeric: ['>', 3] }] } }));
    const no = file('no.json', JSON.stringify({ detail: { changeType: [{ 'anything-but': 'ADDED' }] } }));
    const [a, b] = await Promise.all([spiritctl('events', 'test-pattern', '--pattern', yes, '--event', event), spiritctl('events', 'test-pattern', '--pattern', no, '--event', event)]);
    expect(a).toMatchObject({ code: 0, stdout: 'true\n' });
    expect(b).toMatchObject({ code: 0, stdout: 'false\n' });
  });

  it('exits 2 with the reason for an invalid pattern, 2 naming the file for bad JSON or a missing file', async () => {
    const invalid = file('invalid.json', JSON.stringify({ detail: { generation: [{ numeric: ['>', 'three'] }] } }));
    const broken = file('broken.json', '{"source": [');
    const [bad, json, missing] = await Promise.all([
      spiritctl('events', 'test-pattern', '--pattern', invalid, '--event', event),
      spiritctl('events', 'test-pattern', '--pattern', broken, '--event', event),
      spiritctl('events', 'test-pattern', '--pattern', invalid, '--event', join(dir, 'nope.json')),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/invalid\.json: invalid event pattern at detail\.generation\[0\]\.numeric\[1\]: the value after ">" must be a number/);
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch(/--pattern: .*broken\.json is not valid JSON/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--event: cannot read .*nope\.json: ENOENT/);
  });
});

describe('spiritctl events dlq', () => {
  it('lists persisted dead letters as a table and as JSON', async () => {
    const stateDir = join(dir, 'state');
    const dl: DeadLetter = {
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
      event: { version: '0', id: 'e-1', 'detail-type': 'Cluster Change Notice', source: 'pool-spirit.forwarder', account: '0', time: '2026-01-01T00:00:00Z', region: 'eu-west-1', resources: [], detail: {} },
    };
    appendDeadLetter(join(stateDir, 'dlq.jsonl'), dl);
    const [table, json, empty] = await Promise.all([
      spiritctl('events', 'dlq', '--state-dir', stateDir),
      spiritctl('events', 'dlq', '--json', '--state-dir', stateDir),
      spiritctl('events', 'dlq', '--state-dir', join(dir, 'empty')),
    ]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/RULE\s+TARGET\s+ATTEMPTS/);
    expect(table.stdout).toMatch(/reconcile-rule-1\s+reconcile\s+3\s+retries-exhausted\s+Cluster Change Notice\s+e-1\s+apiserver unavailable/);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ deadLetters: [dl], count: 1 });
    expect(empty).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no dead letters/) });
  });
});
