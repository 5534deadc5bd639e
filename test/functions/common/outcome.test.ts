/** Which thrown errors are terminal, requeue or retry (core/outcome.ts, functions/common/terminal.ts). */
import { describe, expect, it } from 'vitest';
import { ClusterAccessError } from '../../../adapters/cluster-access/index.ts';
import { RolloutConflictError, RolloutNotFoundError } from '../../../adapters/state-table/rollout-state.ts';
import { outcomeOf, RequeueError, TerminalError } from '../../../core/outcome.ts';
import { RolloutSpecError } from '../../../core/rollout/limits.ts';
import { EventValidationError } from '../../../events/index.ts';
import { terminalReasonOf } from '../../../functions/common/terminal.ts';
import { parseTrigger } from '../../../functions/reconcile/trigger.ts';
import { rolloutTerminalReason } from '../../../functions/rollout/handler.ts';

const envelope = {
  version: '0',
  id: 'e-1',
  account: '1',
  time: '2026-03-01T08:00:00Z',
  region: 'eu-west-1',
  resources: [],
  source: 'pool-spirit.reconciler',
  'detail-type': 'Reconcile Request',
};

describe('the outcome of what a handler throws', () => {
  it('TerminalError is terminal, RequeueError requeue, anything else retry', () => {
    expect(outcomeOf(new TerminalError({ kind: 'conflict', message: 'x' }))).toBe('terminal');
    expect(outcomeOf(new RequeueError('PoolSpirit p is being deleted'))).toBe('requeue');
    expect(outcomeOf(Object.assign(new Error('apiserver said 500'), { statusCode: 500 }))).toBe('retry');
  });

  it('a schema failure names its first field; a wrong detail-type is its own kind', () => {
    expect(
      terminalReasonOf(
        new EventValidationError([
          { path: 'detail.nodePool', message: 'Invalid input' },
          { path: 'detail.reason', message: 'Invalid input' },
        ]),
      ),
    ).toEqual({
      kind: 'invalid-event',
      field: 'detail.nodePool',
      message: 'detail.nodePool: Invalid input; detail.reason: Invalid input',
    });
    expect(
      terminalReasonOf(new EventValidationError([{ path: 'detail-type', message: 'expected one of …' }]))?.kind,
    ).toBe('unknown-detail-type');
  });

  it('an unregistered cluster is terminal; other access failures can heal and are retried', () => {
    expect(terminalReasonOf(new ClusterAccessError('c9', undefined, 'not-registered'))).toMatchObject({
      kind: 'unknown-cluster',
      field: 'detail.clusterId',
    });
    for (const reason of ['not-found', 'invalid', 'denied', 'unavailable'] as const) {
      expect(terminalReasonOf(new ClusterAccessError('c1', 'secret', reason)), reason).toBeUndefined();
    }
    expect(terminalReasonOf(new RequeueError('later'))).toBeUndefined();
    expect(terminalReasonOf(new Error('socket hang up'))).toBeUndefined();
  });

  it('a name that cannot be a table key is terminal, naming the event field it came from', () => {
    const reason = terminalReasonOf(
      (() => {
        try {
          parseTrigger({
            ...envelope,
            detail: { clusterId: 'c1', nodePool: 'Pool#1', reason: 'r', requestedBy: 'e2e' },
          });
        } catch (err) {
          return err;
        }
      })(),
    );
    expect(reason).toMatchObject({ kind: 'unkeyable-name', field: 'detail.nodePool' });
    expect(reason?.message).toMatch(/lowercase DNS name/);
  });

  it('rollout: spec, not-found and command errors are terminal with the field in the input; a lost version race is retried', () => {
    const command = { command: 'start' };
    expect(rolloutTerminalReason(new RolloutSpecError('canary', 'lists a cluster twice'), command)).toMatchObject({
      kind: 'invalid-event',
      field: 'rollout.canary',
    });
    expect(
      rolloutTerminalReason(new RolloutSpecError('canary', 'lists a cluster twice'), { ...envelope, detail: command }),
    ).toMatchObject({ field: 'detail.rollout.canary' });
    expect(
      rolloutTerminalReason(new RolloutNotFoundError('r-1'), { command: 'pause', rolloutId: 'r-1' }),
    ).toMatchObject({ kind: 'not-found', field: 'rolloutId' });
    expect(rolloutTerminalReason(new RolloutConflictError('r-1', 3), command)).toBeUndefined();
  });
});
