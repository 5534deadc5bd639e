/**
 * The rendered containers' memory against what the capacity probe measured on the real pool-spirit at the
 * default shape: a request covers the peak, a limit covers the peak times the stated margin. Two measurements:
 * the processes (probe/capacity/measured-peaks.json, `spiritctl probe capacity --local --peaks-out`: RSS and
 * tmpfs counted by hand) and the pod on a real node, where the kernel enforces the limits
 * (probe/capacity/measured-node-peaks.json: one `--local --kubelet real --peaks-out` record per run, the cgroup
 * working set of each container, tmpfs included).
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
const nodePeaks = JSON.parse(
  readFileSync(new URL('../../../probe/capacity/measured-node-peaks.json', import.meta.url), 'utf8'),
) as { kind: 'CapacityNodePeaks'; runs: PeaksRecord[] };

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

describe("rendered memory requests and limits hold the pod's cgroup peaks on a real node", () => {
  it('three kinds of container, each measured in every run, at least at the default shape and storm', () => {
    const d = DEFAULT_CAPACITY_OPTIONS;
    expect(nodePeaks.kind).toBe('CapacityNodePeaks');
    expect(nodePeaks.runs.length).toBeGreaterThanOrEqual(1);
    for (const run of nodePeaks.runs) {
      expect(run.shape).toMatchObject({ nodes: d.nodes, pods: d.pods, objectBytes: d.objectBytes, timeScale: 1 });
      expect(run.shape.patchStormSeconds).toBeGreaterThanOrEqual(600);
      expect(Object.keys(run.product.pod?.containers ?? {}).sort()).toEqual(['agent', 'etcd', 'kube-apiserver']);
      expect(run.product.pod?.oomKills).toBe(0);
    }
  });

  for (const container of ['kube-apiserver', 'etcd', 'agent']) {
    it(`${container}: request ≥ the highest working set of any run, limit ≥ it × ${MEMORY_LIMIT_MARGIN}`, async () => {
      const peak = Math.max(...nodePeaks.runs.map((r) => r.product.pod?.containers[container]?.workingSetBytes ?? 0));
      expect(peak).toBeGreaterThan(0);
      const { request, limit } = await renderedMemory(container);
      expect(request).toBeGreaterThanOrEqual(peak);
      expect(limit).toBeGreaterThanOrEqual(peak * MEMORY_LIMIT_MARGIN);
      // The limit the kernel enforced in the runs is the one rendered now.
      for (const run of nodePeaks.runs) expect(run.product.pod?.containers[container]?.limitBytes).toBe(limit);
    });
  }
});
