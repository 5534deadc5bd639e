import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import { describe, expect, it, vi } from 'vitest';
import { entrySize, MAX_BYTES_PER_CALL, MAX_ENTRIES_PER_CALL, toBatches } from '../../forwarder/entry-size.ts';
import { EventSender, type PutEventsPort } from '../../forwarder/sender.ts';

const entry = (key: string, detail: object = { key }): PutEventsRequestEntry => ({
  Source: 'pool-spirit.forwarder',
  DetailType: 'Change Notice',
  Detail: JSON.stringify(detail),
});

/** A bus that records calls and fails the entries a rule picks (ErrorCode, as EventBridge does). */
class RecordingBus implements PutEventsPort {
  calls: PutEventsRequestEntry[][] = [];
  accepted: PutEventsRequestEntry[] = [];
  failEntry: (e: PutEventsRequestEntry, attempt: number) => boolean = () => false;
  failCall: (callNo: number) => boolean = () => false;
  private attempts = new Map<string, number>();
  async putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]> {
    this.calls.push(entries);
    if (this.failCall(this.calls.length))
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    return entries.map((e) => {
      const n = (this.attempts.get(e.Detail!) ?? 0) + 1;
      this.attempts.set(e.Detail!, n);
      if (this.failEntry(e, n)) return { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' };
      this.accepted.push(e);
      return { EventId: `id-${this.accepted.length}` };
    });
  }
}

describe('toBatches', () => {
  it('never exceeds 10 entries or 256 KB per call and keeps order', () => {
    const sizes = [...Array(25).fill(1000), 200_000, 100_000, 30_000, ...Array(3).fill(10)];
    const batches = toBatches(
      sizes.map((s, i) => ({ i, s })),
      (x) => x.s,
    );
    expect(batches.flat().map((x) => x.i)).toEqual(sizes.map((_, i) => i));
    for (const b of batches) {
      expect(b.length).toBeLessThanOrEqual(MAX_ENTRIES_PER_CALL);
      expect(b.reduce((n, x) => n + x.s, 0)).toBeLessThanOrEqual(MAX_BYTES_PER_CALL);
    }
  });

  it('counts an entry the way EventBridge does', () => {
    expect(
      entrySize({
        Source: 'ab',
        DetailType: 'c',
        Detail: '{"é":1}',
        Time: new Date(),
        Resources: ['xy'],
        EventBusName: 'not-counted',
      } as any),
    ).toBe(14 + 2 + 1 + 8 + 2); // é is two bytes in UTF-8
  });
});

describe('EventSender', () => {
  it('coalesces notices per key within the window and sends the newest', async () => {
    const bus = new RecordingBus();
    const sender = new EventSender(bus, { coalesceWindowMs: 50 });
    await sender.enqueue('np/a', entry('a', { v: 1 }));
    await sender.enqueue('np/a', entry('a', { v: 2 }));
    await sender.enqueue('np/b', entry('b', { v: 1 }));
    await sender.idle();
    expect(bus.accepted.map((e) => e.Detail)).toEqual(['{"v":2}', '{"v":1}']);
    expect(sender.stats()).toMatchObject({ received: 3, coalesced: 1, sent: 2, pendingKeys: 0 });
  });

  it('re-sends exactly the entries reported failed until accepted', async () => {
    const bus = new RecordingBus();
    bus.failEntry = (e, attempt) => Number(JSON.parse(e.Detail!).n) % 3 === 0 && attempt <= 2;
    const sender = new EventSender(bus, { coalesceWindowMs: 5, initialRetryDelayMs: 5, maxRetryDelayMs: 20 });
    for (let n = 0; n < 40; n++) await sender.enqueue(`k${n}`, entry(`k${n}`, { n }));
    await sender.idle();
    const accepted = bus.accepted.map((e) => JSON.parse(e.Detail!).n).sort((a, b) => a - b);
    expect(accepted).toEqual([...Array(40).keys()]);
    // Only the failed entries (multiples of 3) were sent again: each twice more, every other exactly once.
    const sends = new Map<number, number>();
    for (const e of bus.calls.flat()) sends.set(JSON.parse(e.Detail!).n, (sends.get(JSON.parse(e.Detail!).n) ?? 0) + 1);
    for (let n = 0; n < 40; n++) expect(sends.get(n), `entry ${n}`).toBe(n % 3 === 0 ? 3 : 1);
    expect(sender.stats().failedEntryAttempts).toBe(14 * 2);
    for (const call of bus.calls) expect(call.length).toBeLessThanOrEqual(10);
  });

  it('drops an entry refused with a non-retryable error once, reporting it, and still resends retryable ones', async () => {
    const bus = new RecordingBus();
    const codes: Record<string, string> = { bad: 'MalformedDetail', denied: 'NotAuthorizedForSourceException' };
    bus.putEvents = async function (entries) {
      this.calls.push(entries);
      return entries.map((e) => {
        const key = JSON.parse(e.Detail!).key as string;
        if (codes[key]) return { ErrorCode: codes[key], ErrorMessage: `${key} refused` };
        if (key === 'slow' && this.calls.length < 3)
          return { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' };
        this.accepted.push(e);
        return { EventId: `id-${this.accepted.length}` };
      });
    };
    const rejected: string[] = [];
    const sender = new EventSender(bus, {
      coalesceWindowMs: 1,
      initialRetryDelayMs: 5,
      onRejected: (r) => rejected.push(`${r.key}:${r.errorCode}`),
    });
    for (const key of ['bad', 'denied', 'slow', 'ok']) await sender.enqueue(key, entry(key));
    await sender.idle();
    expect(rejected.sort()).toEqual(['bad:MalformedDetail', 'denied:NotAuthorizedForSourceException']);
    const sends = bus.calls.flat().map((e) => JSON.parse(e.Detail!).key as string);
    expect(sends.filter((k) => k === 'bad')).toHaveLength(1);
    expect(sends.filter((k) => k === 'denied')).toHaveLength(1);
    expect(sends.filter((k) => k === 'slow').length).toBeGreaterThan(1);
    expect(bus.accepted.map((e) => JSON.parse(e.Detail!).key).sort()).toEqual(['ok', 'slow']);
    expect(sender.stats()).toMatchObject({ rejected: 2, pendingKeys: 0, inFlightEntries: 0 });
    expect(
      sender
        .stats()
        .recentRejections.map((r) => r.key)
        .sort(),
    ).toEqual(['bad', 'denied']);
  });

  it('retries a whole call that throws (throttling) without losing entries', async () => {
    const bus = new RecordingBus();
    bus.failCall = (n) => n <= 2;
    const sender = new EventSender(bus, { coalesceWindowMs: 1, initialRetryDelayMs: 5 });
    for (let n = 0; n < 5; n++) await sender.enqueue(`k${n}`, entry(`k${n}`, { n }));
    await sender.idle();
    expect(bus.accepted).toHaveLength(5);
    expect(sender.stats()).toMatchObject({ failedCalls: 2, sent: 5 });
    expect(sender.stats().lastError).toContain('ThrottlingException');
  });

  it('applies backpressure: enqueue waits while maxPendingKeys keys are held', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const bus = new RecordingBus();
    const slowBus: PutEventsPort = {
      putEvents: async (e) => {
        await gate;
        return bus.putEvents(e);
      },
    };
    const sender = new EventSender(slowBus, { coalesceWindowMs: 1, maxPendingKeys: 3 });
    for (let n = 0; n < 3; n++) await sender.enqueue(`k${n}`, entry(`k${n}`));
    let fourthQueued = false;
    const fourth = sender.enqueue('k3', entry('k3')).then(() => (fourthQueued = true));
    await vi.waitFor(() => expect(sender.stats().inFlightEntries).toBe(3));
    expect(fourthQueued).toBe(false);
    release();
    await fourth;
    await sender.idle();
    expect(bus.accepted).toHaveLength(4);
  });

  it('flushes what it holds on close, ignoring the coalesce window', async () => {
    const bus = new RecordingBus();
    const sender = new EventSender(bus, { coalesceWindowMs: 60_000 });
    await sender.enqueue('k', entry('k'));
    expect(await sender.close(5_000)).toBe(0);
    expect(bus.accepted).toHaveLength(1);
    await expect(sender.enqueue('k2', entry('k2'))).rejects.toThrow(/stopped/);
  });

  it('rejects a notice larger than EventBridge accepts, naming the key', async () => {
    const sender = new EventSender(new RecordingBus());
    await expect(sender.enqueue('huge', entry('huge', { pad: 'x'.repeat(MAX_BYTES_PER_CALL) }))).rejects.toThrow(
      /huge.*at most 262144/,
    );
  });
});
