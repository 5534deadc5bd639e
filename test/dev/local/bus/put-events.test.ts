import {
  EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
  TestEventPatternCommand,
} from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalBus, startLocalBus } from '../../../../dev/local/bus/server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function client(bus: LocalBus, region = 'eu-west-1') {
  // Any static credentials: the local bus does not check signatures, only reads the region from them.
  return new EventBridgeClient({
    endpoint: bus.endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

const entry = (over: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
  Source: 'pool-spirit.test',
  DetailType: 'Test',
  Detail: JSON.stringify({ n: 1 }),
  ...over,
});

describe('PutEvents over HTTP with the AWS SDK', () => {
  let bus: LocalBus;
  const received: Record<string, unknown>[] = [];
  let failIndex: number | null = null;

  beforeAll(async () => {
    bus = await startLocalBus({
      rules: [{ name: 'all-tests', pattern: { source: ['pool-spirit.test'] }, target: 'sink' }],
      targets: { sink: async (event) => void received.push(event as Record<string, unknown>) },
      eventBuses: ['fleet'],
      injectEntryFailure: (_entry, index) =>
        index === failIndex ? { code: 'ThrottlingException', message: 'Rate exceeded' } : null,
    });
  });
  afterAll(async () => {
    await bus.stop();
  });

  it('accepts entries, gives each a unique id, and delivers the EventBridge envelope', async () => {
    received.length = 0;
    const time = new Date('2026-05-01T12:34:56Z');
    const out = await client(bus).send(
      new PutEventsCommand({
        Entries: [
          entry({ Time: time, Resources: ['arn:aws:eks:eu-west-1:1:cluster/a'] }),
          entry({ Detail: '{"n":2}' }),
          entry({ Detail: '{"n":3}' }),
        ],
      }),
    );
    expect(out.FailedEntryCount).toBe(0);
    const ids = out.Entries!.map((e) => e.EventId!);
    expect(ids.every((id) => UUID.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(3);
    await bus.drain();
    const first = received.find((e) => e.id === ids[0]);
    expect(first).toEqual({
      version: '0',
      id: ids[0],
      'detail-type': 'Test',
      source: 'pool-spirit.test',
      account: '000000000000',
      time: '2026-05-01T12:34:56Z',
      region: 'eu-west-1',
      resources: ['arn:aws:eks:eu-west-1:1:cluster/a'],
      detail: { n: 1 },
    });
    // Entries without Time get the time of receipt, to the second.
    const second = received.find((e) => e.id === ids[1])!;
    expect(second.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Math.abs(Date.parse(second.time as string) - Date.now())).toBeLessThan(5000);
  });

  it('reports bad entries per entry and still accepts the good ones', async () => {
    received.length = 0;
    const out = await client(bus).send(
      new PutEventsCommand({
        Entries: [
          entry({ Source: undefined }),
          entry({ DetailType: undefined }),
          entry({ Detail: undefined }),
          entry({ Detail: '{not json' }),
          entry({ Detail: '[1,2]' }),
          entry({ Source: 'aws.ec2' }),
          entry({ EventBusName: 'nope' }),
          entry({ EventBusName: 'arn:aws:events:eu-west-1:000000000000:event-bus/fleet' }),
          entry(),
        ],
      }),
    );
    expect(out.Entries!.map((e) => e.ErrorCode ?? 'ok')).toEqual([
      'InvalidArgument',
      'InvalidArgument',
      'InvalidArgument',
      'MalformedDetail',
      'MalformedDetail',
      'NotAuthorizedForSourceException',
      'ResourceNotFoundException',
      'ok',
      'ok',
    ]);
    expect(out.FailedEntryCount).toBe(7);
    expect(out.Entries![0].ErrorMessage).toMatch(/Source is a required argument/);
    expect(out.Entries![1].ErrorMessage).toMatch(/DetailType is a required argument/);
    expect(out.Entries![6].ErrorMessage).toMatch(/Event bus nope does not exist/);
    await bus.drain();
    // The `fleet` bus has no rules; only the default-bus entry is delivered.
    expect(received).toHaveLength(1);
  });

  it('fails exactly the entries a fault injector picks, so senders can test their resend logic', async () => {
    failIndex = 1;
    try {
      const out = await client(bus).send(new PutEventsCommand({ Entries: [entry(), entry(), entry()] }));
      expect(out.FailedEntryCount).toBe(1);
      expect(out.Entries![1]).toMatchObject({ ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' });
      expect(out.Entries![0].EventId).toMatch(UUID);
    } finally {
      failIndex = null;
    }
  });

  it('rejects calls over the entry-count and size limits as a whole', async () => {
    const eleven = Array.from({ length: 11 }, () => entry());
    await expect(client(bus).send(new PutEventsCommand({ Entries: eleven }))).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/less than or equal to 10/),
    });
    await expect(client(bus).send(new PutEventsCommand({ Entries: [] }))).rejects.toMatchObject({
      name: 'ValidationException',
    });

    // Entry size per the EventBridge guide: Source + DetailType + Detail bytes (+14 for Time).
    const overhead = 'pool-spirit.test'.length + 'Test'.length + '{"p":""}'.length;
    const atLimit = entry({ Detail: JSON.stringify({ p: 'x'.repeat(256 * 1024 - overhead) }) });
    const ok = await client(bus).send(new PutEventsCommand({ Entries: [atLimit] }));
    expect(ok.FailedEntryCount).toBe(0);
    const overLimit = entry({ Detail: JSON.stringify({ p: 'x'.repeat(256 * 1024 - overhead + 1) }) });
    await expect(client(bus).send(new PutEventsCommand({ Entries: [overLimit] }))).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringMatching(/Total size of the entries/),
    });
    const twoHalves = entry({ Detail: JSON.stringify({ p: 'y'.repeat(130 * 1024) }) });
    await expect(client(bus).send(new PutEventsCommand({ Entries: [twoHalves, twoHalves] }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
  });

  it('answers TestEventPattern like EventBridge', async () => {
    const event = JSON.stringify({
      id: '1',
      account: '1',
      source: 'pool-spirit.test',
      time: '2026-01-01T00:00:00Z',
      region: 'eu-west-1',
      'detail-type': 'x',
      resources: [],
      detail: { n: 3 },
    });
    const yes = await client(bus).send(
      new TestEventPatternCommand({ EventPattern: '{"detail":{"n":[{"numeric":[">",2]}]}}', Event: event }),
    );
    expect(yes.Result).toBe(true);
    const no = await client(bus).send(
      new TestEventPatternCommand({ EventPattern: '{"detail":{"n":[{"numeric":[">",3]}]}}', Event: event }),
    );
    expect(no.Result).toBe(false);
    await expect(
      client(bus).send(
        new TestEventPatternCommand({ EventPattern: '{"detail":{"n":[{"numeric":[">","x"]}]}}', Event: event }),
      ),
    ).rejects.toMatchObject({
      name: 'InvalidEventPatternException',
      message: expect.stringContaining('detail.n[0].numeric[1]'),
    });
  });
});

describe('PutEvents call failures', () => {
  it('injects whole-call failures that the SDK surfaces as service errors', async () => {
    let fail = true;
    const bus = await startLocalBus({
      rules: [],
      targets: {},
      injectCallFailure: () => (fail ? { status: 500, type: 'InternalException', message: 'injected' } : null),
    });
    try {
      await expect(client(bus).send(new PutEventsCommand({ Entries: [entry()] }))).rejects.toMatchObject({
        name: 'InternalException',
        $metadata: { httpStatusCode: 500 },
      });
      fail = false;
      const out = await client(bus).send(new PutEventsCommand({ Entries: [entry()] }));
      expect(out.FailedEntryCount).toBe(0);
      expect(bus.stats()).toMatchObject({ entriesReceived: 1, entriesAccepted: 1, eventsUnmatched: 1 });
    } finally {
      await bus.stop();
    }
  });

  it('refuses unknown operations', async () => {
    const bus = await startLocalBus({ rules: [], targets: {} });
    try {
      const res = await fetch(bus.endpoint, {
        method: 'POST',
        headers: { 'x-amz-target': 'AWSEvents.PutRule', 'content-type': 'application/x-amz-json-1.1' },
        body: '{}',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ __type: 'UnknownOperationException' });
    } finally {
      await bus.stop();
    }
  });
});
