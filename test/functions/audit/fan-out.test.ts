import { Logger } from '@aws-lambda-powertools/logger';
import type { PutEventsRequestEntry, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createStateTable,
  getItem,
  keys,
  registerCluster,
  type StateTable,
} from '../../../adapters/state-table/index.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { createAuditHandler } from '../../../functions/audit/handler.ts';
import { sendEntries } from '../../../functions/common/send-events.ts';

const context = {} as Context;

/** A PutEvents stand-in that records every call and can fail chosen entries once. */
function recordingSender(failOnce: (entry: PutEventsRequestEntry, call: number) => boolean = () => false) {
  const calls: PutEventsRequestEntry[][] = [];
  return {
    calls,
    async putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]> {
      calls.push(entries);
      return entries.map((e) =>
        failOnce(e, calls.length)
          ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }
          : { EventId: 'ok' },
      );
    },
  };
}

describe('audit fan-out', () => {
  let dynamo: LocalDynamo;
  let table: StateTable;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, 'fan-out');
    table = createStateTable({ client: dynamo.client, tableName: 'fan-out' });
    for (let i = 1; i <= 23; i++) {
      await registerCluster(
        table,
        { id: `c-${String(i).padStart(2, '0')}`, access: { kind: 'url', url: 'http://127.0.0.1:1' } },
        new Date(),
      );
    }
  });
  afterAll(() => dynamo?.stop());

  it('sends one audit request per registered cluster, at most 10 per PutEvents, and records the run', async () => {
    const sender = recordingSender((e, call) => call === 1 && e.Detail!.includes('"c-03"'));
    const handler = createAuditHandler({
      table,
      events: sender,
      eventBusName: 'bus-1',
      logger: new Logger({ logLevel: 'ERROR' }),
    });
    const out = await handler(
      {
        version: '0',
        id: 'tick-42',
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '1',
        time: '2026-11-30T08:00:00Z',
        region: 'eu-west-1',
        resources: [],
        detail: {},
      },
      context,
    );
    expect(out).toMatchObject({ kind: 'fan-out', runId: 'tick-42', requestedAt: '2026-11-30T08:00:00.000Z' });
    expect(sender.calls.map((c) => c.length)).toEqual([10, 10, 3, 1]); // the throttled entry re-sent alone
    const sent = sender.calls.flat().map((e) => JSON.parse(e.Detail!));
    expect(new Set(sent.map((d) => d.clusterId)).size).toBe(23);
    expect(
      sender.calls
        .flat()
        .every(
          (e) =>
            e.EventBusName === 'bus-1' &&
            e.Source === 'pool-spirit.reconciler' &&
            e.DetailType === 'Cluster Audit Request',
        ),
    ).toBe(true);
    expect(sent[0]).toEqual({
      clusterId: 'c-01',
      runId: 'tick-42',
      requestedAt: '2026-11-30T08:00:00.000Z',
      requestedBy: 'schedule',
    });
    expect((await getItem(table, keys.auditRun('tick-42')))?.clusters).toHaveLength(23);
  });

  it('gives up with the count and the last error when entries keep failing', async () => {
    const sender = recordingSender(() => true);
    await expect(sendEntries(sender, [{ Source: 's', DetailType: 'd', Detail: '{}' }], 3, 1)).rejects.toThrow(
      /1 of 1 event\(s\) could not be sent after 3 attempts \(last: ThrottlingException: Rate exceeded\)/,
    );
  });

  it('records an unreachable cluster as a finding instead of failing the invocation', async () => {
    const handler = createAuditHandler({ table, events: recordingSender(), logger: new Logger({ logLevel: 'ERROR' }) });
    const out: any = await handler(
      {
        version: '0',
        id: 'e1',
        'detail-type': 'Cluster Audit Request',
        source: 'pool-spirit.reconciler',
        account: '1',
        time: '2026-11-30T08:00:00Z',
        region: 'eu-west-1',
        resources: [],
        detail: {
          clusterId: 'c-01',
          runId: 'tick-42',
          requestedAt: '2026-11-30T08:00:00.000Z',
          requestedBy: 'schedule',
        },
      },
      context,
    );
    expect(out.kind).toBe('cluster');
    expect(out.record.findings).toEqual([
      expect.objectContaining({ kind: 'cluster-unreachable', severity: 'critical', cluster: 'c-01' }),
    ]);
    expect(out.record.error).toBeTruthy();
  }, 60_000);

  it('rejects an audit request without its fields, naming them', async () => {
    const handler = createAuditHandler({ table, events: recordingSender(), logger: new Logger({ logLevel: 'ERROR' }) });
    await expect(
      handler(
        {
          version: '0',
          id: 'e2',
          'detail-type': 'Cluster Audit Request',
          source: 'pool-spirit.reconciler',
          account: '1',
          time: '2026-11-30T08:00:00Z',
          region: 'x',
          resources: [],
          detail: { clusterId: 'c-01' },
        },
        context,
      ),
    ).rejects.toThrow(/detail\.runId: .*detail\.requestedAt/s);
  });
});
