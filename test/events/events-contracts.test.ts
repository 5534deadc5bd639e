import { describe, expect, it } from 'vitest';
import {
  changeNoticeDetailSchema,
  changeNoticeEventSchema,
  changeNoticeRouting,
  EventValidationError,
  LEADER_PROBE_REQUEST_DETAIL_TYPE,
  leaderProbeRequestDetailSchema,
  leaderProbeRequestEventSchema,
  leaderProbeRequestRouting,
  parseEvent,
  RECONCILER_SOURCE,
  reconcileRequestDetailSchema,
  reconcileRequestRouting,
  toPutEventsEntry,
} from '../../events/index.ts';

const notice = {
  clusterId: 'edge-1',
  kind: 'NodePool',
  name: 'pool-a',
  uid: 'u-1',
  resourceVersion: '7',
  changeType: 'ADDED',
  poolName: 'pool-a',
  observedAt: '2026-03-04T10:00:00Z',
};

function issuesOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EventValidationError);
    return (err as Error).message;
  }
  throw new Error('expected a validation error');
}

describe('event contracts', () => {
  it('parses a change notice from JSON text or an object', () => {
    expect(parseEvent(changeNoticeDetailSchema, JSON.stringify(notice))).toEqual(notice);
    expect(parseEvent(changeNoticeDetailSchema, notice)).toEqual(notice);
  });

  it('names each bad field and what was expected', () => {
    const message = issuesOf(() =>
      parseEvent(changeNoticeDetailSchema, { ...notice, kind: 'ReplicaSet', clusterId: undefined, generation: -1 }),
    );
    expect(message).toMatch(/kind: .*"NodePool"/);
    expect(message).toMatch(/clusterId: /);
    expect(message).toMatch(/generation: /);
  });

  it('refuses whole objects or extra data in a change notice', () => {
    expect(issuesOf(() => parseEvent(changeNoticeDetailSchema, { ...notice, object: { spec: {} } }))).toMatch(/object/);
  });

  it('names the field inside detail when parsing a whole event', () => {
    const event = {
      version: '0',
      id: 'i',
      'detail-type': changeNoticeRouting.detailType,
      source: changeNoticeRouting.source,
      account: '0',
      time: '2026-03-04T10:00:00Z',
      region: 'r',
      resources: [],
      detail: { ...notice, changeType: 'UPDATED' },
    };
    expect(issuesOf(() => parseEvent(changeNoticeEventSchema, event))).toMatch(/detail\.changeType: /);
    expect(issuesOf(() => parseEvent(changeNoticeEventSchema, '{oops'))).toMatch(/not valid JSON/);
  });

  it('builds PutEvents entries only from valid details', () => {
    const entry = toPutEventsEntry(
      reconcileRequestRouting,
      reconcileRequestDetailSchema,
      { clusterId: 'c', nodePool: 'p', reason: 'audit-drift', requestedBy: 'audit' },
      { eventBusName: 'fleet' },
    );
    expect(entry).toEqual({
      Source: 'pool-spirit.reconciler',
      DetailType: 'Reconcile Request',
      Detail: '{"clusterId":"c","nodePool":"p","reason":"audit-drift","requestedBy":"audit"}',
      EventBusName: 'fleet',
    });
    expect(() =>
      toPutEventsEntry(reconcileRequestRouting, reconcileRequestDetailSchema, { clusterId: 'c' } as never),
    ).toThrow(/nodePool/);
  });

  it('takes a leader probe request with only its cluster, or with the run and requester the fan-out adds', () => {
    expect(leaderProbeRequestRouting).toEqual({
      source: RECONCILER_SOURCE,
      detailType: LEADER_PROBE_REQUEST_DETAIL_TYPE,
    });
    expect(parseEvent(leaderProbeRequestDetailSchema, { clusterId: 'edge-1' })).toEqual({ clusterId: 'edge-1' });
    const full = { clusterId: 'edge-1', runId: 'tick-9', requestedBy: 'schedule' };
    expect(parseEvent(leaderProbeRequestDetailSchema, { ...full, extra: true })).toEqual(full);
    const entry = toPutEventsEntry(leaderProbeRequestRouting, leaderProbeRequestDetailSchema, full, {
      eventBusName: 'fleet',
    });
    expect(entry).toEqual({
      Source: 'pool-spirit.reconciler',
      DetailType: 'Leader Probe Request',
      Detail: '{"clusterId":"edge-1","runId":"tick-9","requestedBy":"schedule"}',
      EventBusName: 'fleet',
    });
  });

  it('names the field of a bad leader probe request, in the detail and in the whole event', () => {
    expect(issuesOf(() => parseEvent(leaderProbeRequestDetailSchema, { clusterId: 'Edge_1' }))).toMatch(
      /clusterId: expected a registered cluster id/,
    );
    expect(issuesOf(() => parseEvent(leaderProbeRequestDetailSchema, { clusterId: 'e', runId: '' }))).toMatch(
      /runId: /,
    );
    const event = {
      version: '0',
      id: 'i',
      'detail-type': LEADER_PROBE_REQUEST_DETAIL_TYPE,
      source: RECONCILER_SOURCE,
      account: '0',
      time: '2026-03-04T10:00:00Z',
      region: 'r',
      resources: [],
      detail: { requestedBy: 'schedule' },
    };
    expect(issuesOf(() => parseEvent(leaderProbeRequestEventSchema, event))).toMatch(/detail\.clusterId: /);
    expect(issuesOf(() => parseEvent(leaderProbeRequestEventSchema, { ...event, source: 'x' }))).toMatch(/source: /);
  });
});
