import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseServerlessYaml } from '../../../dev/local/bus/serverless-config.ts';
import { depsFromEnvironment } from '../../../functions/reconcile/deps.ts';

/** The reconcile function's timeout as deployed (its own, or the provider's), in ms. */
function reconcileTimeoutMs(): number {
  const config = parseServerlessYaml(readFileSync(new URL('../../../serverless.yml', import.meta.url), 'utf8')) as {
    provider: { timeout?: number };
    functions: Record<string, { timeout?: number }>;
  };
  const seconds = config.functions.reconcile?.timeout ?? config.provider.timeout;
  if (typeof seconds !== 'number') throw new Error('serverless.yml sets no timeout for reconcile');
  return seconds * 1000;
}

describe('reconcile wiring', () => {
  it('names the missing setting when the table name is not configured', () => {
    expect(() => depsFromEnvironment({})).toThrow(/STATE_TABLE_NAME is not set/);
  });

  it("names the missing setting when the dead-letter queue's URL is not configured", () => {
    expect(() => depsFromEnvironment({ STATE_TABLE_NAME: 'pool-spirit-dev-state', AWS_REGION: 'eu-west-1' })).toThrow(
      /DEAD_LETTER_QUEUE_URL is not set/,
    );
  });

  it('builds the cloud dependencies from the environment without reading credentials', () => {
    const deps = depsFromEnvironment({
      STATE_TABLE_NAME: 'pool-spirit-dev-state',
      AWS_REGION: 'eu-west-1',
      DEAD_LETTER_QUEUE_URL:
        'https://sqs.eu-west-1.amazonaws.com/123456789012/pool-spirit-reconciler-dev-reconcile-dlq',
    });
    expect(deps.table.name).toBe('pool-spirit-dev-state');
    expect(deps.deadLetters).toBeDefined();
    // Why cluster writes need no fencing token (docs/decisions, reconcile contract): an invocation is
    // ended by the platform before its lease can lapse, so no stale holder writes after a new one took over.
    expect(deps.leaseTtlMs).toBeGreaterThan(reconcileTimeoutMs());
  });
});
