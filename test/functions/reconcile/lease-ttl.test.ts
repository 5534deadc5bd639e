import { describe, expect, it } from 'vitest';
import { LEASE_PAST_DEADLINE_MS, leaseTtlAt } from '../../../functions/reconcile/run.ts';

describe('leaseTtlAt', () => {
  const now = new Date(1_000_000);
  it('takes the configured TTL when the invocation has no known deadline (a direct caller)', () => {
    expect(leaseTtlAt(90_000, { id: 'a' }, now)).toBe(90_000);
  });
  it('takes the configured TTL when the deadline is further off than it', () => {
    expect(leaseTtlAt(90_000, { id: 'a', deadline: now.getTime() + 900_000 }, now)).toBe(90_000);
  });
  it('ends the lease a margin past the deadline when that comes first', () => {
    expect(leaseTtlAt(90_000, { id: 'a', deadline: now.getTime() + 5_000 }, now)).toBe(5_000 + LEASE_PAST_DEADLINE_MS);
  });
  it('never takes a lease of zero or less, even past the deadline', () => {
    expect(leaseTtlAt(90_000, { id: 'a', deadline: now.getTime() - 60_000 }, now)).toBe(1);
  });
});
