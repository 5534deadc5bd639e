import { describe, expect, it } from 'vitest';
import { depsFromEnvironment } from '../../functions/reconcile/deps.ts';

describe('reconcile wiring', () => {
  it('names the missing setting when the table name is not configured', () => {
    expect(() => depsFromEnvironment({})).toThrow(/STATE_TABLE_NAME is not set/);
  });

  it('builds the cloud dependencies from the environment without reading credentials', () => {
    const deps = depsFromEnvironment({ STATE_TABLE_NAME: 'pool-spirit-dev-state', AWS_REGION: 'eu-west-1' });
    expect(deps.table.name).toBe('pool-spirit-dev-state');
    expect(deps.leaseTtlMs).toBeGreaterThan(60_000); // longer than the function timeout
  });
});
