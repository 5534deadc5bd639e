import { describe, expect, it } from 'vitest';
import { depsFromEnvironment } from '../../functions/reconcile/deps.ts';

describe('reconcile wiring', () => {
  it('names the missing setting when the table name is not configured', () => {
    expect(() => depsFromEnvironment({})).toThrow(/STATE_TABLE_NAME is not set/);
  });

  it("names the missing setting when the dead-letter queue's URL is not configured", () => {
    expect(() => depsFromEnvironment({ STATE_TABLE_NAME: 'pool-spirit-dev-state', AWS_REGION: 'eu-west-1' })).toThrow(/DEAD_LETTER_QUEUE_URL is not set/);
  });

  it('builds the cloud dependencies from the environment without reading credentials', () => {
    const deps = depsFromEnvironment({
      STATE_TABLE_NAME: 'pool-spirit-dev-state',
      AWS_REGION: 'eu-west-1',
      DEAD_LETTER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/pool-spirit-reconciler-dev-reconcile-dlq',
    });
    expect(deps.table.name).toBe('pool-spirit-dev-state');
    expect(deps.deadLetters).toBeDefined();
    expect(deps.leaseTtlMs).toBeGreaterThan(60_000); // longer than the function timeout
  });
});
