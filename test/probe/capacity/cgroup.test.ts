import { describe, expect, it } from 'vitest';
import { cgroupPathOf, memoryFromV1, memoryFromV2, parseFlatKeyed } from '../../../probe/capacity/cgroup.ts';
import type { EtcdSnapshot } from '../../../probe/capacity/etcd-observer.ts';
import { summarize } from '../../../probe/capacity/load.ts';
import { type MemoryPeaks, memoryPeaks } from '../../../probe/capacity/peaks.ts';
import { stormSeries, stormSvg } from '../../../probe/capacity/plot.ts';
import type { StormSample } from '../../../probe/capacity/storm.ts';

const MiB = 2 ** 20;

// memory.stat of a v1 pod cgroup (kernel 6.x), cut to the lines read and a few around them.
const V1_STAT = `cache 0
rss 0
shmem 0
inactive_file 0
total_cache ${400 * MiB}
total_rss ${300 * MiB}
total_shmem ${250 * MiB}
total_inactive_file ${120 * MiB}
total_active_file ${30 * MiB}
`;

describe('cgroup memory', () => {
  it('reads a v1 pod cgroup: working set keeps tmpfs (shmem) and drops inactive file cache', () => {
    const m = memoryFromV1({
      usage: `${700 * MiB}\n`,
      maxUsage: `${810 * MiB}\n`,
      limit: `${3200 * MiB}\n`,
      stat: V1_STAT,
      oomControl: 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
    });
    expect(m).toEqual({
      usageBytes: 700 * MiB,
      workingSetBytes: 580 * MiB,
      anonBytes: 300 * MiB,
      shmemBytes: 250 * MiB,
      peakUsageBytes: 810 * MiB,
      limitBytes: 3200 * MiB,
      oomKills: 2,
    });
  });

  it('reads "no limit" in v1 (the page-rounded 2^63) and v2 ("max") as null', () => {
    const v1 = memoryFromV1({
      usage: '10',
      maxUsage: '10',
      limit: '9223372036854771712',
      stat: '',
      oomControl: 'oom_kill 0',
    });
    expect(v1.limitBytes).toBeNull();
    const v2 = memoryFromV2({ current: '10', peak: null, max: 'max\n', stat: '', events: 'oom 0\noom_kill 0\n' });
    expect(v2).toMatchObject({ limitBytes: null, peakUsageBytes: null, oomKills: 0 });
  });

  it('reads a v2 cgroup: anon, shmem, inactive_file and oom_kill from memory.events', () => {
    const m = memoryFromV2({
      current: `${500 * MiB}`,
      peak: `${640 * MiB}`,
      max: `${1024 * MiB}`,
      stat: `anon ${200 * MiB}\nfile ${280 * MiB}\nshmem ${240 * MiB}\ninactive_file ${20 * MiB}\n`,
      events: 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n',
    });
    expect(m).toEqual({
      usageBytes: 500 * MiB,
      workingSetBytes: 480 * MiB,
      anonBytes: 200 * MiB,
      shmemBytes: 240 * MiB,
      peakUsageBytes: 640 * MiB,
      limitBytes: 1024 * MiB,
      oomKills: 1,
    });
  });

  it('finds a process cgroup per v1 controller (cpu and cpuacct mounted apart too) and the v2 path', () => {
    const hybrid = [
      '12:memory:/pool-spirit-n1/kubepods/burstable/podabc/c1',
      '3:cpuacct:/pool-spirit-n1/kubepods/burstable/podabc/c1',
      '2:cpu:/other',
      '0::/',
    ].join('\n');
    expect(cgroupPathOf(hybrid, 1, 'memory')).toBe('/pool-spirit-n1/kubepods/burstable/podabc/c1');
    expect(cgroupPathOf(hybrid, 1, 'cpuacct')).toBe('/pool-spirit-n1/kubepods/burstable/podabc/c1');
    expect(cgroupPathOf('4:cpu,cpuacct:/x\n', 1, 'cpuacct')).toBe('/x');
    expect(cgroupPathOf('0::/kubepods.slice/pod.slice/cri-c1.scope\n', 2, 'memory')).toBe(
      '/kubepods.slice/pod.slice/cri-c1.scope',
    );
    expect(cgroupPathOf('', 1, 'memory')).toBeUndefined();
  });

  it('skips lines that are not key and count', () => {
    expect([...parseFlatKeyed('a 1\nb x\n\n c  2 \n')]).toEqual([
      ['a', 1],
      ['c', 2],
    ]);
  });
});

const cg = (workingSet: number, oomKills = 0) => ({
  usageBytes: workingSet + 10,
  workingSetBytes: workingSet,
  anonBytes: 0,
  shmemBytes: 0,
  peakUsageBytes: workingSet + 20,
  limitBytes: 3000,
  oomKills,
});
const snapshot = (podWs: number | null, etcdWs = 1, oom = 0): EtcdSnapshot => ({
  rssBytes: null,
  rssShmemBytes: null,
  tmpfsBytes: null,
  memoryBytes: null,
  dbSizeBytes: 5 * MiB,
  dbSizeInUseBytes: null,
  alarms: null,
  revision: null,
  apiRssBytes: null,
  pod:
    podWs === null
      ? null
      : { ...cg(podWs, oom), cpuSeconds: 1, containers: { etcd: { ...cg(etcdWs), limitBytes: 2000, cpuSeconds: 1 } } },
});

describe('pod peaks', () => {
  it('takes the highest working set of the pod and of each container, the first as idle, and the OOM count', () => {
    const peaks = memoryPeaks([snapshot(100, 40), snapshot(null), snapshot(300, 90, 1), snapshot(200, 120, 1)]);
    expect(peaks.pod).toEqual<MemoryPeaks['pod']>({
      idleWorkingSetBytes: 100,
      workingSetBytes: 300,
      usageBytes: 310,
      kernelPeakUsageBytes: 320,
      limitBytes: 3000,
      oomKills: 1,
      containers: { etcd: { workingSetBytes: 120, limitBytes: 2000 } },
    });
    expect(memoryPeaks([snapshot(null)]).pod).toBeNull();
  });
});

describe('storm plot', () => {
  const sample = (t: number, podWs: number | null): StormSample => ({
    t,
    updates: t * 100,
    windowP99Ms: t === 0 ? null : 40 + t,
    ...snapshot(podWs === null ? null : podWs * MiB, 100 * MiB),
  });

  it("draws a pod's cgroup series with its limits, and the write p99 on the right axis", () => {
    const samples = [sample(0, 300), sample(1, 320), sample(2, 310)];
    const { series, limits } = stormSeries(samples);
    expect(series.map((s) => s.name)).toEqual([
      'pod working set',
      'etcd container',
      'etcd db size',
      'write p99 (ms, right axis)',
    ]);
    expect(series[0]!.points).toEqual([
      [0, 300],
      [1, 320],
      [2, 310],
    ]);
    expect(series.at(-1)!.points).toEqual([
      [1, 41],
      [2, 42],
    ]);
    expect(limits).toEqual([
      ['pod limit', 3000 / MiB],
      ['etcd limit', 2000 / MiB],
    ]);
    const svg = stormSvg('a <title> & more', samples);
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('a &lt;title&gt; &amp; more');
    expect(svg.match(/<path /g)).toHaveLength(4);
  });

  it('draws the processes’ series where no kubelet ran the pool-spirit', () => {
    const samples = [sample(0, null), sample(1, null)];
    expect(stormSeries(samples).series.map((s) => s.name)).toEqual(['etcd db size', 'write p99 (ms, right axis)']);
    expect(stormSeries(samples).limits).toEqual([]);
  });
});

describe('latency summary', () => {
  it('summarises more latencies than a spread can pass (a long storm at a high rate), the largest exact', () => {
    const latencies = Array.from({ length: 400_000 }, (_, i) => (i % 1000) + 1);
    latencies[123_456] = 9_999;
    // 400 runs of 1..1000, one 457 raised to 9,999: the median and p99 move up by one rank.
    expect(summarize(latencies)).toEqual({ p50: 501, p99: 991, max: 9999 });
    expect(summarize([])).toMatchObject({ max: 0 });
  });
});
