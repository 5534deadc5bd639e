import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCommandArgs, UsageError } from '../../../cli/command.ts';
import { costCommand } from '../../../cli/commands/cost.ts';
import { MEASURED_PROFILE } from '../../../core/cost/measured-profile.ts';
import { DEFAULT_USAGE, monthlyCost } from '../../../core/cost/model.ts';

async function cost(argv: string[]): Promise<string> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const parsed = parseCommandArgs(costCommand, argv);
    await costCommand.run({ values: parsed.values as Record<string, unknown>, positionals: parsed.positionals });
  } finally {
    spy.mockRestore();
  }
  return out.join('');
}

afterEach(() => vi.restoreAllMocks());

describe('spiritctl cost', () => {
  it('prints the model total for the fleet asked for, with the dated prices it used, as JSON', async () => {
    const result = JSON.parse(
      await cost(['--clusters', '50', '--pools-per-cluster', '20', '--audit-every', '1h', '--json']),
    );
    expect(result.prices.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(result.fleet.pools).toBe(1000);
    expect(result.fleet.auditEveryMinutes).toBe(60);
    // The same fleet through the model with the defaults file's us-east-1 prices.
    const { parsePrices, regionPrices } = await import('../../../core/cost/prices.ts');
    const { readFile } = await import('node:fs/promises');
    const { DEFAULT_PRICES_FILE } = await import('../../../cli/commands/cost.ts');
    const prices = regionPrices(parsePrices(JSON.parse(await readFile(DEFAULT_PRICES_FILE, 'utf8'))), 'us-east-1');
    const expected = monthlyCost(
      { ...DEFAULT_USAGE, clusters: 50, poolsPerCluster: 20, auditEveryMinutes: 60 },
      MEASURED_PROFILE,
      prices,
    );
    expect(result.monthly.total).toBeCloseTo(expected.total, 9);
    expect(result.comparison.controller.total).toBeGreaterThan(0);
  });

  it('prints the total and the comparison as text', async () => {
    const text = await cost(['--clusters', '10', '--pools-per-cluster', '20']);
    expect(text).toMatch(/serverless, per month: \$[\d.]+ \(\$[\d.]+ per pool\)/);
    expect(text).toMatch(/always-on controller pod per cluster/);
  });

  it('names the flag at fault', async () => {
    await expect(cost(['--region', 'mars-1'])).rejects.toThrow(UsageError);
    await expect(cost(['--region', 'mars-1'])).rejects.toThrow(/--region: .*mars-1/);
    await expect(cost(['--audit-every', 'often'])).rejects.toThrow(/--audit-every/);
    await expect(cost(['--controller-memory', 'lots'])).rejects.toThrow(/--controller-memory/);
  });
});
