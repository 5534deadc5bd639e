import { describe, expect, it } from 'vitest';
import { EventValidationError } from '../../../events/index.ts';
import { parseProbeTrigger } from '../../../functions/probe/trigger.ts';

const envelope = (source: string, detailType: string, detail: unknown, id = 'e-1') => ({
  version: '0',
  id,
  'detail-type': detailType,
  source,
  account: '123456789012',
  time: '2026-12-01T08:00:00Z',
  region: 'eu-west-1',
  resources: [],
  detail,
});
const scheduled = (id = 'tick-1') => envelope('aws.events', 'Scheduled Event', {}, id);
const request = (detail: unknown) => envelope('pool-spirit.reconciler', 'Leader Probe Request', detail);

/** The fields the validation error names, as `path: message`. */
function rejection(raw: unknown): string[] {
  try {
    parseProbeTrigger(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(EventValidationError);
    return (err as EventValidationError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('parseProbeTrigger', () => {
  it('reads the schedule tick as a fan-out of every cluster, its event id the run', () => {
    expect(parseProbeTrigger(scheduled('6a7e8feb-b491-4cf7-a9f1-bf3703467718'))).toEqual({
      scope: 'all',
      runId: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
    });
    // As a Lambda test invoke gives it: JSON text.
    expect(parseProbeTrigger(JSON.stringify(scheduled()))).toEqual({ scope: 'all', runId: 'tick-1' });
  });

  it('reads a probe request from the bus: the fan-out one with its run and requester, an operator one with only the cluster', () => {
    expect(parseProbeTrigger(request({ clusterId: 'edge-1', runId: 'tick-1', requestedBy: 'schedule' }))).toEqual({
      scope: 'cluster',
      clusterId: 'edge-1',
      field: 'detail.clusterId',
      runId: 'tick-1',
      requestedBy: 'schedule',
    });
    expect(parseProbeTrigger(request({ clusterId: 'edge-1' }))).toEqual({
      scope: 'cluster',
      clusterId: 'edge-1',
      field: 'detail.clusterId',
    });
  });

  it('reads a direct invoke naming one cluster', () => {
    expect(parseProbeTrigger({ clusterId: 'edge-1' })).toEqual({
      scope: 'cluster',
      clusterId: 'edge-1',
      field: 'clusterId',
    });
  });

  it('names the field of bad input', () => {
    expect(rejection({ clusterId: 'Edge_1' })).toEqual(['clusterId: expected a registered cluster id (a DNS label)']);
    expect(rejection({ clusterId: 'edge-1', pool: 'p' })).toEqual([expect.stringMatching(/^\(event\): .*"pool"/)]);
    expect(rejection(request({ runId: 'tick-1' }))).toEqual([expect.stringMatching(/^detail\.clusterId: /)]);
    expect(rejection(request({ clusterId: 'edge-1', runId: 7 }))).toEqual([expect.stringMatching(/^detail\.runId: /)]);
    expect(rejection({ ...scheduled(), source: 'someone.else' })).toEqual([
      expect.stringMatching(/^source: .*"aws\.events"/),
    ]);
    // The tick's id becomes each request's runId: one that could not be sent is refused here, by its name.
    expect(rejection(scheduled('x'.repeat(201)))).toEqual([expect.stringMatching(/^id: /)]);
    expect(rejection({ ...scheduled(), 'detail-type': 'Cluster Audit Request' })).toEqual([
      expect.stringMatching(/^detail-type: expected "Scheduled Event" or "Leader Probe Request", got "Cluster Audit/),
    ]);
    // An envelope without its detail-type is not a direct invoke.
    const { 'detail-type': _, ...noDetailType } = request({ clusterId: 'edge-1' });
    expect(rejection(noDetailType)).toEqual([expect.stringMatching(/^detail-type: .*got nothing/)]);
    expect(rejection('{"clusterId": ')).toEqual([expect.stringMatching(/^\(event\): not valid JSON/)]);
  });
});
