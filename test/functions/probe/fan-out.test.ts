import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ClusterRegistration,
  createStateTable,
  listClusters,
  registerCluster,
  type StateTable,
} from '../../../adapters/state-table/index.ts';
import { testEventPattern } from '../../../dev/local/bus/pattern.ts';
import { loadRules } from '../../../dev/local/bus/rules-from-serverless.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { leaderProbeRequestDetailSchema, parseEvent } from '../../../events/index.ts';
import { createProbeHandler } from '../../../functions/probe/handler.ts';
import { parseProbeTrigger } from '../../../functions/probe/trigger.ts';

const context = {} as Context;
const rules = loadRules(join(import.meta.dirname, '..', '..', '..', 'serverless.yml'));
/** The bus the probe's request rule listens on: where the fan-out must send. */
const probeBus = rules.find((r) => r.target === 'probe' && r.pattern !== undefined)?.eventBus ?? 'default';

const scheduled = (id: string) => ({
  version: '0',
  id,
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-12-01T08:00:00Z',
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/probe-schedule'],
  detail: {},
});

/** A logger and metrics that print nothing (the probe's metrics are not what these tests look at). */
function quiet() {
  const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const metrics = new Metrics({ namespace: 'PoolSpiritTest', serviceName: 'probe-fan-out', logger: silent });
  Object.assign(metrics, { console: silent });
  return { logger: new Logger({ logLevel: 'SILENT' }), metrics };
}

/** A PutEvents stand-in that records every call and accepts every entry. */
function recordingSender() {
  const calls: PutEventsRequestEntry[][] = [];
  return {
    calls,
    async putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]> {
      calls.push(entries);
      return entries.map((_, i) => ({ EventId: `ev-${calls.length}-${i}` }));
    },
  };
}

/** The event the bus would deliver for an entry, as a rule's pattern and the probe function see it. */
function deliveredEvent(entry: PutEventsRequestEntry, id: string) {
  return {
    version: '0',
    id,
    'detail-type': entry.DetailType,
    source: entry.Source,
    account: '123456789012',
    time: '2026-12-01T08:00:01Z',
    region: 'eu-west-1',
    resources: [],
    detail: JSON.parse(entry.Detail ?? 'null'),
  };
}

describe('probe fan-out', () => {
  let dynamo: LocalDynamo;
  let table: StateTable;
  let registered: ClusterRegistration[];

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, 'probe-fan-out');
    table = createStateTable({ client: dynamo.client, tableName: 'probe-fan-out' });
    for (let i = 23; i >= 1; i--) {
      await registerCluster(
        table,
        { id: `c-${String(i).padStart(2, '0')}`, access: { kind: 'url', url: 'http://127.0.0.1:1' } },
        new Date(),
      );
    }
    registered = await listClusters(table);
  });
  afterAll(() => dynamo?.stop());

  it('sends one Leader Probe Request per registered cluster, routed by serverless.yml to the probe alone', async () => {
    const sender = recordingSender();
    const { logger, metrics } = quiet();
    const info = vi.spyOn(logger, 'info');
    const handler = createProbeHandler({ table, events: sender, eventBusName: probeBus, logger, metrics });

    const out = await handler(scheduled('tick-42'), context);

    const ids = registered.map((c) => c.id).sort();
    expect(ids).toHaveLength(23);
    expect(out).toEqual({ kind: 'fan-out', runId: 'tick-42', clusters: ids, putEventsCalls: 3 });
    expect(sender.calls.map((c) => c.length)).toEqual([10, 10, 3]);
    expect(info).toHaveBeenCalledWith('probe fanned out', { runId: 'tick-42', clusters: 23, putEventsCalls: 3 });
    const entries = sender.calls.flat();
    expect(entries.map((e) => parseEvent(leaderProbeRequestDetailSchema, e.Detail).clusterId)).toEqual(ids);
    for (const [i, entry] of entries.entries()) {
      const detail = parseEvent(leaderProbeRequestDetailSchema, entry.Detail);
      expect(detail).toEqual({ clusterId: ids[i], runId: 'tick-42', requestedBy: 'schedule' });
      const event = deliveredEvent(entry, `ev-${i}`);
      const matched = rules.filter(
        (r) =>
          r.pattern !== undefined &&
          (r.eventBus ?? 'default') === entry.EventBusName &&
          testEventPattern(r.pattern, event),
      );
      expect(
        matched.map((r) => r.target),
        `rules matching ${entry.Detail}`,
      ).toEqual(['probe']);
      // What the rule delivers is what the probe takes as a request for that one cluster.
      expect(parseProbeTrigger(event)).toEqual({
        scope: 'cluster',
        clusterId: ids[i],
        field: 'detail.clusterId',
        runId: 'tick-42',
        requestedBy: 'schedule',
      });
    }
  });

  it.each([0, 1, 10, 11, 20, 21])('sends %i clusters in ceil(N / 10) PutEvents calls', async (n) => {
    const sender = recordingSender();
    const asked = registered.slice(0, n);
    const handler = createProbeHandler({
      table,
      clusters: async () => asked,
      events: sender,
      eventBusName: probeBus,
      ...quiet(),
    });
    const out = await handler(scheduled(`tick-${n}`), context);
    expect(out).toMatchObject({ kind: 'fan-out', putEventsCalls: Math.ceil(n / 10) });
    expect(sender.calls).toHaveLength(Math.ceil(n / 10));
    expect(sender.calls.every((c) => c.length <= 10)).toBe(true);
    expect(
      sender.calls
        .flat()
        .map((e) => JSON.parse(e.Detail ?? '{}').clusterId)
        .sort(),
    ).toEqual(asked.map((c) => c.id).sort());
  });

  it('fails a tick without an event sender, saying what is missing, and sends nothing', async () => {
    const clusters = vi.fn(async () => registered);
    const handler = createProbeHandler({ table, clusters, ...quiet() });
    await expect(handler(scheduled('tick-none'), context)).rejects.toThrow(
      'the probe fan-out needs an event sender (EVENT_BUS_NAME)',
    );
    expect(clusters).not.toHaveBeenCalled();
  });

  it('probes a requested cluster in its own invocation, and fails it (for the bus to retry) when unreachable', async () => {
    const sender = recordingSender();
    const handler = createProbeHandler({
      table,
      events: sender,
      eventBusName: probeBus,
      ...quiet(),
    });
    const request = deliveredEvent(
      {
        Source: 'pool-spirit.reconciler',
        DetailType: 'Leader Probe Request',
        Detail: JSON.stringify({ clusterId: 'c-07', runId: 'tick-42', requestedBy: 'schedule' }),
      },
      'ev-7',
    );
    await expect(handler(request, context)).rejects.toThrow(/^probe of cluster c-07 failed: /);
    await expect(handler({ ...request, detail: { clusterId: 'c-99' } }, context)).rejects.toThrow(
      /cluster c-99 is not registered/,
    );
    // A request is never fanned out again.
    expect(sender.calls).toEqual([]);
  }, 60_000);
});
