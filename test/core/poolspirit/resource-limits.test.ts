/**
 * The rendered containers' memory against what the capacity probe measured on the real pool-spirit at the
 * default shape (probe/capacity/measured-peaks.json, written by `spiritctl probe capacity --local
 * --peaks-out`): a request covers the peak, a limit covers the peak times the stated margin.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quantityBytes } from '../../../core/quantity.ts';
import { DEFAULT_CAPACITY_OPTIONS } from '../../../probe/capacity/index.ts';
import { MEMORY_LIMIT_MARGIN, type PeaksRecord } from '../../../probe/capacity/peaks.ts';
import { renderedPod } from '../../support/real-apiserver.ts';

const peaks = JSON.parse(
  readFileSync(new URL('../../../probe/capacity/measured-peaks.json', import.meta.url), 'utf8'),
) as PeaksRecord;

async function renderedMemory(container: string) {
  const { pod } = await renderedPod();
  const c = pod.containers.find((x) => x.name === container) as
    | { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }
    | undefined;
  return {
    request: quantityBytes(c?.resources?.requests?.memory ?? '0'),
    limit: quantityBytes(c?.resources?.limits?.memory ?? '0'),
  };
}

describe('rendered memory requests and limits hold the measured peaks', () => {
  it('the peaks were measured at the default shape, with the flags rendered now', async () => {
    const d = DEFAULT_CAPACITY_OPTIONS;
    expect(peaks.kind).toBe('CapacityPeaks');
    expect(peaks.shape).toEqual({
      nodes: d.nodes,
      pods: d.pods,
      objectBytes: d.objectBytes,
      contenders: d.contenders,
      patchStormSeconds: d.patchStormSeconds,
      timeScale: d.timeScale,
    });
    const { pod } = await renderedPod();
    const args = pod.containers.find((c) => c.name === 'kube-apiserver')!.args!;
    for (const flag of peaks.apiServerFlags.product) expect(args).toContain(flag);
  });

  it(`kube-apiserver: request ≥ peak RSS, limit ≥ peak RSS × ${MEMORY_LIMIT_MARGIN}`, async () => {
    const peak = peaks.product.apiServerRssBytes!;
    expect(peak).toBeGreaterThan(0);
    const { request, limit } = await renderedMemory('kube-apiserver');
    expect(request).toBeGreaterThanOrEqual(peak);
    expect(limit).toBeGreaterThanOrEqual(peak * MEMORY_LIMIT_MARGIN);
  });

  it(`etcd: request ≥ peak RSS + tmpfs, limit ≥ (peak RSS + tmpfs) × ${MEMORY_LIMIT_MARGIN}`, async () => {
    const peak = peaks.product.etcdMemoryBytes!;
    expect(peak).toBeGreaterThan(0);
    const { request, limit } = await renderedMemory('etcd');
    expect(request).toBeGreaterThanOrEqual(peak);
    expect(limit).toBeGreaterThanOrEqual(peak * MEMORY_LIMIT_MARGIN);
  });
});
