import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../dev/local/bus/clock.ts';
import { readDeadLetters } from '../../../../dev/local/bus/dlq-store.ts';
import { InvalidRuleError } from '../../../../dev/local/bus/rules.ts';
import { type LocalBus, type LocalBusOptions, startLocalBus } from '../../../../dev/local/bus/server.ts';
import type { BusEvent } from '../../../../dev/local/bus/types.ts';

const entry = (source: string, detailType: string, detail: Record<string, unknown>, bus?: string) => ({
  Source: source,
  DetailType: detailType,
  Detail: JSON.stringify(detail),
  ...(bus ? { EventBusName: bus } : {}),
});

let bus: LocalBus | undefined;
const dirs: string[] = [];
async function start(opts: LocalBusOptions): Promise<LocalBus> {
  bus = await startLocalBus(opts);
  return bus;
}
afterEach(async () => {
  await bus?.stop();
  bus = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('routing', () => {
  it('delivers each event to every rule whose pattern matches, on the rule bus only', async () => {
    const got: Record<string, string[]> = { reconcile: [], audit: [], fleet: [], never: [] };
    const record = (name: string) => async (e: unknown) =>
      void got[name].push(((e as BusEvent).detail as { key: string }).key);
    const b = await start({
      rules: [
        {
          name: 'notices',
          eventBus: 'fleet',
          pattern: { source: ['pool-spirit.forwarder'], detail: { poolName: [{ exists: true }] } },
          target: 'reconcile',
        },
        { name: 'deleted', eventBus: 'fleet', pattern: { detail: { changeType: ['DELETED'] } }, target: 'audit' },
        { name: 'default-bus', pattern: { source: [{ prefix: 'pool-spirit.' }] }, target: 'fleet' },
        {
          name: 'disabled',
          eventBus: 'fleet',
          pattern: { source: ['pool-spirit.forwarder'] },
          target: 'never',
          enabled: false,
        },
      ],
      targets: {
        reconcile: record('reconcile'),
        audit: record('audit'),
        fleet: record('fleet'),
        never: record('never'),
      },
    });
    const result = b.putEvents([
      entry(
        'pool-spirit.forwarder',
        'Cluster Change Notice',
        { key: 'a', poolName: 'p1', changeType: 'ADDED' },
        'fleet',
      ),
      entry(
        'pool-spirit.forwarder',
        'Cluster Change Notice',
        { key: 'b', poolName: 'p1', changeType: 'DELETED' },
        'fleet',
      ),
      entry('pool-spirit.forwarder', 'Cluster Change Notice', { key: 'c', changeType: 'MODIFIED' }, 'fleet'),
      entry('pool-spirit.forwarder', 'Cluster Change Notice', { key: 'd', poolName: 'p2' }),
    ]);
    expect(result.FailedEntryCount).toBe(0);
    await b.drain();
    expect(got.reconcile.sort()).toEqual(['a', 'b']);
    expect(got.audit).toEqual(['b']);
    expect(got.fleet).toEqual(['d']);
    expect(got.never).toEqual([]);
    expect(b.stats()).toMatchObject({ eventsMatched: 3, eventsUnmatched: 1, delivered: 4 });
  });

  it('routes injected AWS service events that PutEvents would refuse', async () => {
    const got: BusEvent[] = [];
    const b = await start({
      rules: [
        {
          name: 'spot',
          pattern: { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning'] },
          target: 'probe',
        },
      ],
      targets: { probe: async (e) => void got.push(e as BusEvent) },
    });
    const event = b.injectEvent({
      source: 'aws.ec2',
      'detail-type': 'EC2 Spot Instance Interruption Warning',
      detail: { 'instance-id': 'i-1' },
    });
    await b.drain();
    expect(got).toEqual([event]);
  });

  it('sends the part of the event named by inputPath', async () => {
    const got: unknown[] = [];
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', inputPath: '$.detail' }],
      targets: { t: async (e) => void got.push(e) },
    });
    b.putEvents([entry('s', 'x', { clusterId: 'c1' })]);
    await b.drain();
    expect(got).toEqual([{ clusterId: 'c1' }]);
  });

  it('refuses invalid rules at start, naming the rule', async () => {
    const t = { t: async () => {} };
    await expect(
      startLocalBus({ rules: [{ name: 'bad', pattern: { source: 'x' }, target: 't' }], targets: t }),
    ).rejects.toThrow(/rule "bad": invalid event pattern at source/);
    await expect(
      startLocalBus({ rules: [{ name: 'r', pattern: { source: ['x'] }, target: 'missing' }], targets: t }),
    ).rejects.toThrow(/target "missing" is not one of the registered targets/);
    await expect(
      startLocalBus({
        rules: [{ name: 'r', pattern: { source: ['x'] }, target: 't', retryPolicy: { maximumRetryAttempts: 186 } }],
        targets: t,
      }),
    ).rejects.toThrow(/maximumRetryAttempts must be a whole number from 0 to 185/);
    await expect(
      startLocalBus({
        rules: [{ name: 'r', pattern: { source: ['x'] }, target: 't', retryPolicy: { maximumEventAgeInSeconds: 59 } }],
        targets: t,
      }),
    ).rejects.toThrow(/maximumEventAgeInSeconds must be a whole number from 60 to 86400/);
    await expect(
      startLocalBus({ rules: [{ name: 'r', schedule: 'rate(5 minute)', target: 't' }], targets: t }),
    ).rejects.toThrow(InvalidRuleError);
    await expect(
      startLocalBus({
        rules: [{ name: 'r', eventBus: 'fleet', schedule: 'rate(5 minutes)', target: 't' }],
        targets: t,
      }),
    ).rejects.toThrow(/only be on the default event bus/);
    await expect(startLocalBus({ rules: [{ name: 'r', target: 't' }], targets: t })).rejects.toThrow(
      /needs an event pattern, a schedule, or both/,
    );
  });
});

describe('retries and dead letters', () => {
  it('retries a failing target until it succeeds (at-least-once)', async () => {
    let calls = 0;
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumRetryAttempts: 5 } }],
      targets: {
        t: async () => {
          calls++;
          if (calls < 3) throw new Error('apiserver unavailable');
        },
      },
      retry: { baseDelayMs: 1, maxDelayMs: 4 },
    });
    b.putEvents([entry('s', 'x', {})]);
    await b.drain();
    expect(calls).toBe(3);
    expect(b.stats()).toMatchObject({ attempts: 3, retries: 2, delivered: 1, deadLettered: 0 });
    expect(b.deadLetters()).toEqual([]);
  });

  it('dead-letters after the retry budget with the event, rule, attempts and a sanitised error, persisted as JSON lines', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'bus-dlq-'));
    dirs.push(stateDir);
    const b = await start({
      rules: [
        {
          name: 'reconcile-rule',
          pattern: { source: ['s'] },
          target: 'reconcile',
          retryPolicy: { maximumRetryAttempts: 2 },
          deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:0:dlq',
        },
      ],
      targets: {
        reconcile: async () => {
          throw new Error(
            'apply failed: Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig token=s3cr3t-value\n    at apply (x.ts:1:1)',
          );
        },
      },
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
      stateDir,
    });
    const [result] = b.putEvents([entry('s', 'x', { clusterId: 'c1' })]).Entries as { EventId: string }[];
    await b.drain();
    const [dl] = b.deadLetters();
    expect(dl).toMatchObject({
      eventId: result.EventId,
      rule: 'reconcile-rule',
      target: 'reconcile',
      eventBus: 'default',
      deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:0:dlq',
      reason: 'retries-exhausted',
      attempts: 3,
      event: { id: result.EventId, source: 's', detail: { clusterId: 'c1' } },
    });
    expect(dl.error).toContain('apply failed');
    expect(dl.error).not.toContain('eyJhbGciOiJSUzI1NiJ9');
    expect(dl.error).not.toContain('s3cr3t-value');
    expect(dl.error).not.toContain('x.ts:1:1');
    expect(b.stats()).toMatchObject({ attempts: 3, retries: 2, deadLettered: 1, delivered: 0 });
    const persisted = readDeadLetters(join(stateDir, 'dlq.jsonl'));
    expect(persisted.deadLetters).toEqual([dl]);
    expect(readFileSync(join(stateDir, 'dlq.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('makes exactly one attempt when maximumRetryAttempts is 0', async () => {
    let calls = 0;
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumRetryAttempts: 0 } }],
      targets: {
        t: async () => {
          calls++;
          throw new Error('no');
        },
      },
      retry: { baseDelayMs: 1 },
    });
    b.putEvents([entry('s', 'x', {})]);
    await b.drain();
    expect(calls).toBe(1);
    expect(b.deadLetters()[0]).toMatchObject({ attempts: 1, reason: 'retries-exhausted', error: 'no' });
  });

  it('backs off exponentially on the injected clock', async () => {
    const clock = new FakeClock();
    const attemptsAt: number[] = [];
    const b = await start({
      clock,
      random: () => 1, // no jitter: each wait is the full step
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumRetryAttempts: 4 } }],
      targets: {
        t: async () => {
          attemptsAt.push(clock.now());
          throw new Error('down');
        },
      },
      retry: { baseDelayMs: 1000, maxDelayMs: 5000 },
    });
    const t0 = clock.now();
    b.putEvents([entry('s', 'x', {})]);
    await clock.advance(0);
    expect(attemptsAt).toEqual([t0]);
    await clock.advance(60_000);
    expect(attemptsAt.map((t) => t - t0)).toEqual([0, 1000, 3000, 7000, 12000]);
    await b.drain();
    expect(b.deadLetters()[0]).toMatchObject({ attempts: 5, reason: 'retries-exhausted' });
  });

  it('jitters each wait between half and the whole step', async () => {
    const clock = new FakeClock();
    const attemptsAt: number[] = [];
    const b = await start({
      clock,
      random: () => 0,
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumRetryAttempts: 2 } }],
      targets: {
        t: async () => {
          attemptsAt.push(clock.now());
          throw new Error('down');
        },
      },
      retry: { baseDelayMs: 1000 },
    });
    const t0 = clock.now();
    b.putEvents([entry('s', 'x', {})]);
    await clock.advance(10_000);
    expect(attemptsAt.map((t) => t - t0)).toEqual([0, 500, 1500]);
  });

  it('gives up when the next retry would pass the maximum event age', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const b = await start({
      clock,
      random: () => 1,
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumEventAgeInSeconds: 60 } }],
      targets: {
        t: async () => {
          calls++;
          throw new Error('still down');
        },
      },
      retry: { baseDelayMs: 10_000, maxDelayMs: 20_000 },
    });
    b.putEvents([entry('s', 'x', {})]);
    await clock.advance(120_000);
    await b.drain();
    // Attempts at 0, 10 s, 30 s, 50 s; the next would be at 70 s > 60 s.
    expect(calls).toBe(4);
    expect(b.deadLetters()[0]).toMatchObject({
      reason: 'maximum-event-age-exceeded',
      attempts: 4,
      error: 'still down',
    });
  });

  it('fails an attempt that outlives attemptTimeoutMs', async () => {
    const clock = new FakeClock();
    const b = await start({
      clock,
      attemptTimeoutMs: 5000,
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't', retryPolicy: { maximumRetryAttempts: 0 } }],
      targets: { t: () => new Promise(() => {}) },
    });
    b.putEvents([entry('s', 'x', {})]);
    await clock.advance(5000);
    await b.drain();
    expect(b.deadLetters()[0].error).toMatch(/timed out after 5000 ms/);
  });
});

describe('fault injection', () => {
  it('delivers every event twice with injectDuplicates: 1, keeping the event id', async () => {
    const ids: string[] = [];
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't' }],
      targets: { t: async (e) => void ids.push((e as BusEvent).id) },
      injectDuplicates: 1,
    });
    const result = b.putEvents(Array.from({ length: 5 }, (_, i) => entry('s', 'x', { i })));
    await b.drain();
    const sent = result.Entries.map((e) => (e as { EventId: string }).EventId);
    expect(ids).toHaveLength(10);
    for (const id of sent) expect(ids.filter((x) => x === id)).toHaveLength(2);
    expect(b.stats().duplicatesInjected).toBe(5);
  });

  it('reorders deliveries within the window and loses none', async () => {
    const seen: number[] = [];
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't' }],
      targets: { t: async (e) => void seen.push(((e as BusEvent).detail as { i: number }).i) },
      injectReorder: { windowMs: 5 },
      maxConcurrency: 1,
    });
    b.putEvents(Array.from({ length: 10 }, (_, i) => entry('s', 'x', { i })));
    b.putEvents(Array.from({ length: 5 }, (_, i) => entry('s', 'x', { i: 10 + i })));
    await b.drain();
    expect([...seen].sort((a, c) => a - c)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    expect(seen).not.toEqual(Array.from({ length: 15 }, (_, i) => i));
  });

  it('rejects a duplicate probability outside 0-1', async () => {
    await expect(startLocalBus({ rules: [], targets: {}, injectDuplicates: 2 })).rejects.toThrow(
      /probability from 0 to 1/,
    );
  });
});

describe('drain', () => {
  it('waits for deliveries in flight and queued behind the concurrency limit', async () => {
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const b = await start({
      rules: [{ name: 'r', pattern: { source: ['s'] }, target: 't' }],
      targets: {
        t: async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
          done++;
        },
      },
      maxConcurrency: 2,
    });
    b.putEvents(Array.from({ length: 6 }, () => entry('s', 'x', {})));
    expect(b.stats().inFlight + b.stats().queued).toBe(6);
    await b.drain();
    expect(done).toBe(6);
    expect(maxRunning).toBe(2);
    expect(b.stats()).toMatchObject({ inFlight: 0, queued: 0, waitingRetry: 0 });
  });
});
