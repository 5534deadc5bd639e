import { describe, expect, it } from 'vitest';
import { run } from '../../../dev/bench/status-writes.ts';

describe('npm run bench -- status-writes', () => {
  it('writes a rendered pool-spirit Deployment status and a ConfigMap floor, and reports both per write', async () => {
    const out = (await run(['--writes', '5', '--runs', '2'])) as {
      deploymentBytes: number;
      floorCpuUsPerWrite: number;
      statusCpuUsPerWrite: number;
      statusVsFloor: number;
      samples: { floor: number[]; status: number[] };
    };
    // A pool-spirit Deployment as rendered, with its managed fields: well past the floor's ~1 KB object.
    expect(out.deploymentBytes).toBeGreaterThan(10_000);
    expect(out.samples.floor).toHaveLength(2);
    expect(out.samples.status).toHaveLength(2);
    expect(out.floorCpuUsPerWrite).toBeGreaterThan(0);
    expect(out.statusCpuUsPerWrite).toBeGreaterThan(0);
    // The ratio is of each run's own pair (the median of two is their mean), not of the medians.
    const ratios = out.samples.status.map((s, i) => s / out.samples.floor[i]!);
    expect(out.statusVsFloor).toBeCloseTo((ratios[0]! + ratios[1]!) / 2, 2);
  });

  it('names a bad flag', async () => {
    await expect(run(['--writes', 'none'])).rejects.toThrow(
      '--writes must be a whole number from 1 to 100000, got "none"',
    );
  });
});
