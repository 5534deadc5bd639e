import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../dev/local/bus/clock.ts';
import { InvalidScheduleError, nextFireTime, parseSchedule } from '../../../../dev/local/bus/schedule.ts';
import { type LocalBus, startLocalBus } from '../../../../dev/local/bus/server.ts';

const at = (iso: string) => new Date(iso);
const next = (expr: string, after: string) => nextFireTime(parseSchedule(expr), at(after))?.toISOString() ?? null;

describe('parseSchedule', () => {
  it('parses rate expressions into a period', () => {
    expect(parseSchedule('rate(5 minutes)')).toMatchObject({ kind: 'rate', periodMs: 5 * 60_000 });
    expect(parseSchedule('rate(1 minute)')).toMatchObject({ kind: 'rate', periodMs: 60_000 });
    expect(parseSchedule('rate(2 hours)')).toMatchObject({ kind: 'rate', periodMs: 2 * 3_600_000 });
    expect(parseSchedule('rate(1 day)')).toMatchObject({ kind: 'rate', periodMs: 86_400_000 });
  });

  it.each([
    ['rate(1 minutes)', /singular unit/],
    ['rate(5 minute)', /plural unit/],
    ['rate(0 minutes)', /at least 1/],
    ['rate(5 weeks)', /minute\(s\), hour\(s\) or day\(s\)/],
    ['rate(-1 minutes)', /positive whole number/],
    ['every 5 minutes', /expected rate\(value unit\) or cron/],
    ['cron(0/5 * * * ?)', /6 fields/],
    ['cron(0 10 * * * *)', /exactly one of day-of-month and day-of-week must be "\?"/],
    ['cron(0 10 ? * ? *)', /exactly one of day-of-month and day-of-week/],
    ['cron(60 * * * ? *)', /minutes: 60 is outside 0-59/],
    ['cron(0 24 * * ? *)', /hours: 24 is outside 0-23/],
    ['cron(0 0 32 * ? *)', /day-of-month: 32 is outside 1-31/],
    ['cron(0 0 ? FOO MON *)', /month: "FOO" is not a number or a name/],
    ['cron(0 0 ? * 8 *)', /day-of-week: 8 is outside 1-7/],
    ['cron(0 0 ? * MON#6 *)', /#1 to #5/],
    ['cron(0 18-9 * * ? *)', /runs backwards/],
    ['cron(0/0 * * * ? *)', /step "0" must be a positive whole number/],
    ['cron(? * * * ? *)', /"\?" is only allowed in day-of-month or day-of-week/],
    ['cron(0 0 1 1 ? 2300)', /year: 2300 is outside 1970-2199/],
  ])('rejects %s with a reason', (expr, reason) => {
    expect(() => parseSchedule(expr)).toThrow(InvalidScheduleError);
    expect(() => parseSchedule(expr)).toThrow(reason);
  });
});

// Examples from the EventBridge user guide, "Schedule expressions for rules" (cron expression examples).
describe('nextFireTime', () => {
  it.each([
    ['cron(0/5 * * * ? *)', '2026-03-04T10:02:30Z', '2026-03-04T10:05:00.000Z'],
    ['cron(0/5 * * * ? *)', '2026-03-04T10:05:00Z', '2026-03-04T10:10:00.000Z'],
    ['cron(15 10 * * ? *)', '2026-03-04T10:15:00Z', '2026-03-05T10:15:00.000Z'], // 10:15 UTC every day
    ['cron(0 18 ? * MON-FRI *)', '2026-03-06T18:00:00Z', '2026-03-09T18:00:00.000Z'], // Friday → Monday
    ['cron(0 8 1 * ? *)', '2026-03-04T00:00:00Z', '2026-04-01T08:00:00.000Z'], // 8:00 on the 1st
    ['cron(0/10 * ? * MON-FRI *)', '2026-03-07T12:00:00Z', '2026-03-09T00:00:00.000Z'], // Saturday → Monday
    ['cron(0/5 8-17 ? * MON-FRI *)', '2026-03-04T17:57:00Z', '2026-03-05T08:00:00.000Z'],
    ['cron(0 9 ? * 2#1 *)', '2026-03-04T00:00:00Z', '2026-04-06T09:00:00.000Z'], // first Monday of the month
    ['cron(0 0 L * ? *)', '2026-02-10T00:00:00Z', '2026-02-28T00:00:00.000Z'], // last day of the month
    ['cron(0 0 LW * ? *)', '2026-05-01T00:00:00Z', '2026-05-29T00:00:00.000Z'], // 31 May 2026 is a Sunday
    ['cron(0 0 15W * ? *)', '2026-08-01T00:00:00Z', '2026-08-14T00:00:00.000Z'], // 15 Aug 2026 is a Saturday
    ['cron(0 0 1W * ? *)', '2026-08-02T00:00:00Z', '2026-08-03T00:00:00.000Z'], // 1 Aug is a Saturday: Monday the 3rd, not July 31
    ['cron(0 0 ? * 6L *)', '2026-03-01T00:00:00Z', '2026-03-27T00:00:00.000Z'], // last Friday
    ['cron(0 0 29 2 ? *)', '2026-03-01T00:00:00Z', '2028-02-29T00:00:00.000Z'], // leap day
    ['cron(30 12 1 JAN,JUL ? 2027)', '2026-03-01T00:00:00Z', '2027-01-01T12:30:00.000Z'],
    ['cron(0 0 1 1 ? 1999)', '2026-03-01T00:00:00Z', null], // never again
    ['rate(5 minutes)', '2026-03-04T10:02:30Z', '2026-03-04T10:07:30.000Z'],
  ])('%s after %s → %s', (expr, after, expected) => {
    expect(next(expr, after)).toBe(expected);
  });
});

describe('schedules on the local bus', () => {
  let bus: LocalBus | undefined;
  afterEach(async () => {
    await bus?.stop();
    bus = undefined;
  });

  it('fires rate schedules as Scheduled Events from aws.events, on the injected clock', async () => {
    const clock = new FakeClock(Date.UTC(2026, 2, 4, 10, 0, 0));
    const received: { event: Record<string, unknown>; now: number }[] = [];
    bus = await startLocalBus({
      clock,
      rules: [{ name: 'audit-tick', schedule: 'rate(5 minutes)', target: 'audit' }],
      targets: {
        audit: async (event) => void received.push({ event: event as Record<string, unknown>, now: clock.now() }),
      },
    });
    await clock.advance(4 * 60_000);
    expect(received).toHaveLength(0);
    await clock.advance(11 * 60_000);
    await bus.drain();
    expect(received.map((r) => r.event.time)).toEqual([
      '2026-03-04T10:05:00Z',
      '2026-03-04T10:10:00Z',
      '2026-03-04T10:15:00Z',
    ]);
    for (const { event } of received) {
      expect(event).toMatchObject({
        source: 'aws.events',
        'detail-type': 'Scheduled Event',
        detail: {},
        resources: [expect.stringMatching(/:rule\/audit-tick$/)],
      });
    }
    expect(new Set(received.map((r) => r.event.id)).size).toBe(3);
    expect(bus.stats().scheduledEventsFired).toBe(3);
  });

  it('fires cron schedules at wall-clock minutes and sends a constant input when the rule has one', async () => {
    const clock = new FakeClock(Date.UTC(2026, 2, 4, 10, 2, 0));
    const inputs: unknown[] = [];
    bus = await startLocalBus({
      clock,
      rules: [{ name: 'probe', schedule: 'cron(0/5 * * * ? *)', target: 'probe', input: { mode: 'all-clusters' } }],
      targets: { probe: async (input) => void inputs.push({ input, at: new Date(clock.now()).toISOString() }) },
    });
    await clock.advance(9 * 60_000);
    await bus.drain();
    expect(inputs).toEqual([
      { input: { mode: 'all-clusters' }, at: '2026-03-04T10:05:00.000Z' },
      { input: { mode: 'all-clusters' }, at: '2026-03-04T10:10:00.000Z' },
    ]);
  });

  it('does not fire disabled schedules and stops firing after stop()', async () => {
    const clock = new FakeClock();
    let calls = 0;
    bus = await startLocalBus({
      clock,
      rules: [
        { name: 'off', schedule: 'rate(1 minute)', target: 't', enabled: false },
        { name: 'on', schedule: 'rate(1 minute)', target: 't' },
      ],
      targets: { t: async () => void calls++ },
    });
    await clock.advance(60_000);
    await bus.drain();
    expect(calls).toBe(1);
    await bus.stop();
    bus = undefined;
    await clock.advance(10 * 60_000);
    expect(calls).toBe(1);
    expect(clock.pending).toBe(0);
  });
});
