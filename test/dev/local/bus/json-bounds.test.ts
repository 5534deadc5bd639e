/**
 * Bounds on untrusted JSON in the local bus: a PutEvents entry whose Detail nests 10,000 deep (60 KB) once
 * crashed the whole local stack (the dead-letter store's JSON.stringify overflowed the stack after the
 * retries). Now that entry is refused on its own, the rest of the call goes through, and the dead-letter
 * store cannot be crashed by what it is given.
 */

import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient, PutEventsCommand, TestEventPatternCommand } from '@aws-sdk/client-eventbridge';
import { afterEach, describe, expect, it } from 'vitest';
import { appendDeadLetter, readDeadLetters } from '../../../../dev/local/bus/dlq-store.ts';
import { compilePattern, InvalidPatternError, testEventPattern } from '../../../../dev/local/bus/pattern.ts';
import { type LocalBus, startLocalBus } from '../../../../dev/local/bus/server.ts';
import type { BusEvent, DeadLetter } from '../../../../dev/local/bus/types.ts';

const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
function nestedValue(depth: number): Record<string, unknown> {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v as Record<string, unknown>;
}

let bus: LocalBus | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await bus?.stop();
  bus = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'json-bounds-'));
  dirs.push(d);
  return d;
};

describe('PutEvents bounds the depth of each Detail', () => {
  it('refuses a 10,000-deep Detail for that entry only; the others are delivered; nothing reaches the DLQ; the bus stays up', async () => {
    const stateDir = tempDir();
    const delivered: string[] = [];
    bus = await startLocalBus({
      rules: [
        {
          name: 'all',
          pattern: { source: ['pool-spirit.test'] },
          target: 'sink',
          retryPolicy: { maximumRetryAttempts: 2 },
        },
      ],
      // A target that walks the event (like the functions' zod parse) and fails on what it cannot take.
      targets: { sink: async (e) => void delivered.push(JSON.stringify((e as BusEvent).detail)) },
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
      stateDir,
    });
    const deep = nestedText(10_000);
    expect(deep.length).toBeGreaterThan(60_000);
    const client = new EventBridgeClient({
      endpoint: bus.endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    const normal = (n: number) => ({
      Source: 'pool-spirit.test',
      DetailType: 'Test',
      Detail: JSON.stringify({ clusterId: 'c1', poolName: `p${n}`, changeType: 'MODIFIED' }),
    });
    const out = await client.send(
      new PutEventsCommand({
        Entries: [normal(1), { Source: 'pool-spirit.test', DetailType: 'Test', Detail: deep }, normal(2)],
      }),
    );
    expect(out.FailedEntryCount).toBe(1);
    expect(out.Entries?.[0].EventId).toBeTruthy();
    expect(out.Entries?.[1]).toMatchObject({
      ErrorCode: 'MalformedDetail',
      ErrorMessage: 'Detail is malformed: it is nested deeper than 64 levels (the limit is 64).',
    });
    expect(out.Entries?.[2].EventId).toBeTruthy();
    await bus.drain();
    expect(delivered.sort()).toEqual([normal(1).Detail, normal(2).Detail]);
    expect(bus.stats()).toMatchObject({ entriesAccepted: 2, entriesFailed: 1, retries: 0, deadLettered: 0 });
    expect(readDeadLetters(join(stateDir, 'dlq.jsonl')).deadLetters).toEqual([]);
    // Still serving: a later call, and a Detail exactly at the bound, go through.
    const again = await client.send(
      new PutEventsCommand({ Entries: [{ Source: 'pool-spirit.test', DetailType: 'Test', Detail: nestedText(64) }] }),
    );
    expect(again.FailedEntryCount).toBe(0);
    await bus.drain();
    expect(delivered).toHaveLength(3);
    client.destroy();
  });

  it('TestEventPattern refuses a too-deep Event or EventPattern with the bound, not a stack overflow', async () => {
    bus = await startLocalBus({ rules: [], targets: {} });
    const client = new EventBridgeClient({
      endpoint: bus.endpoint,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    const event = JSON.stringify({ source: 'x', detail: nestedValue(10) });
    await expect(
      client.send(
        new TestEventPatternCommand({ EventPattern: nestedText(20_000).replace('1}', '[1]}'), Event: event }),
      ),
    ).rejects.toThrow(/nested deeper than 64 levels/);
    await expect(
      client.send(
        new TestEventPatternCommand({
          EventPattern: '{"source":["x"]}',
          Event: `{"source":"x","detail":${nestedText(10_000)}}`,
        }),
      ),
    ).rejects.toThrow(/Event is nested deeper than 64/);
    expect(
      (await client.send(new TestEventPatternCommand({ EventPattern: '{"source":["x"]}', Event: event }))).Result,
    ).toBe(true);
    client.destroy();
  });

  it('injectEvent refuses a too-deep detail with a clear error', async () => {
    bus = await startLocalBus({ rules: [], targets: {} });
    expect(() => bus!.injectEvent({ source: 'aws.ec2', 'detail-type': 'X', detail: nestedValue(10_000) })).toThrow(
      /detail is nested deeper than 64 levels/,
    );
  });
});

describe('the dead-letter store never crashes on what it stores', () => {
  const deadLetter = (detail: Record<string, unknown>): DeadLetter => ({
    eventId: 'e-deep',
    rule: 'r',
    eventBus: 'default',
    target: 'sink',
    deadLetterQueueArn: null,
    reason: 'retries-exhausted',
    error: 'boom',
    attempts: 3,
    firstAttemptAt: '2026-01-01T00:00:00.000Z',
    failedAt: '2026-01-01T00:00:07.000Z',
    event: {
      version: '0',
      id: 'e-deep',
      'detail-type': 'Deep',
      source: 'pool-spirit.test',
      account: '0',
      time: '2026-01-01T00:00:00Z',
      region: 'eu-west-1',
      resources: [],
      detail,
    },
  });

  it('keeps the envelope of an event too deep to serialise, says why, and reads back', () => {
    const file = join(tempDir(), 'dlq.jsonl');
    const stored = appendDeadLetter(file, deadLetter(nestedValue(10_000)));
    expect(stored.eventOmitted).toMatch(/not kept whole: it is nested deeper than 66 levels/);
    appendDeadLetter(file, deadLetter({ ok: true }));
    const { deadLetters, badLines } = readDeadLetters(file);
    expect(badLines).toEqual([]);
    expect(deadLetters).toHaveLength(2);
    expect(deadLetters[0]).toMatchObject({
      eventId: 'e-deep',
      event: { id: 'e-deep', 'detail-type': 'Deep', detail: {} },
    });
    expect(deadLetters[1]).toEqual(deadLetter({ ok: true }));
  });

  it('reports a too-deep line written by someone else as unreadable instead of loading it', () => {
    const file = join(tempDir(), 'dlq.jsonl');
    appendFileSync(file, `${JSON.stringify({ ...deadLetter({}), event: null }).replace('null', nestedText(10_000))}\n`);
    appendDeadLetter(file, deadLetter({ ok: true }));
    const { deadLetters, badLines } = readDeadLetters(file);
    expect(badLines).toEqual([1]);
    expect(deadLetters).toHaveLength(1);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
  });
});

describe('the pattern compiler bounds depth before recursing', () => {
  it('refuses a 20,000-deep pattern, text or object, with InvalidPatternError naming the bound', () => {
    const text = nestedText(20_000).replace('1}', '[1]}');
    expect(() => compilePattern(text)).toThrow(InvalidPatternError);
    expect(() => compilePattern(text)).toThrow('invalid event pattern: nested deeper than 64 levels (the limit is 64)');
    expect(() => compilePattern(nestedValue(20_000))).toThrow(
      'invalid event pattern: nested deeper than 64 levels (the limit is 64)',
    );
  });

  it('still compiles and matches normal patterns', () => {
    const pattern = {
      source: ['pool-spirit.forwarder'],
      detail: { changeType: ['ADDED', 'MODIFIED'], pool: { labels: { tier: [{ prefix: 'edge' }] } } },
    };
    const event = {
      source: 'pool-spirit.forwarder',
      detail: { changeType: 'ADDED', pool: { labels: { tier: 'edge-1' } } },
    };
    expect(testEventPattern(pattern, event)).toBe(true);
    expect(testEventPattern(JSON.stringify(pattern), { ...event, source: 'other' })).toBe(false);
  });
});
