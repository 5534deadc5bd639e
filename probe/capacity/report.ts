/** The capacity probe's report for people (the JSON document is the report for scripts). */

import type { EtcdSnapshot } from './etcd-observer.ts';
import type { CapacityProbeReport, StormSide } from './run.ts';
import type { StormSample } from './storm.ts';

const MiB = 2 ** 20;
const mib = (b: number | null | undefined) =>
  typeof b === 'number' ? `${(b / MiB).toFixed(b < 10 * MiB ? 1 : 0)}` : '–';
const sec = (ms: number | null) =>
  ms === null ? '–' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
const yes = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** Rows of the storm series shown side by side (the JSON has every sample). */
const SERIES_ROWS = 12;

export function formatCapacityReport(r: CapacityProbeReport): string {
  const p = r.parameters;
  const e = r.leaderElection;
  const out: string[] = [];
  out.push(
    `Capacity probe — ${r.target.kind} (${r.target.server}): ${p.nodes} Nodes + ${p.pods} Pods of ~${p.objectBytes} B, ` +
      `${p.contenders} contenders, time scale ${p.timeScale}, ${r.durationSeconds} s`,
  );
  const v = r.verdict;
  out.push(
    `Verdict: ${v.pass ? 'PASS' : 'FAIL'} — memory ${v.memory}${v.upstreamMemory ? ` (upstream settings: ${v.upstreamMemory})` : ''}; ` +
      `first leader ${yes(v.firstLeaderWithinRetryPeriod)}; failover ${yes(v.failoverWithinLeasePlusTwoRetries)}; overlaps ${yes(v.zeroOverlaps)}`,
    '',
  );

  const l = r.load;
  out.push(`Load (concurrency ${p.concurrency}; etcd figures from ${r.target.etcdFiguresFrom})`);
  out.push(
    `  write   ${l.write.requests} objects  ${l.write.perSecond}/s  p50 ${l.write.latencyMs.p50} ms  p99 ${l.write.latencyMs.p99} ms  ` +
      `errors ${l.write.errors}  (each ~${l.write.meanSentBytes} B sent, ~${l.write.meanStoredBytes} B stored)`,
  );
  out.push(
    `  delete  ${l.delete.requests} objects  ${l.delete.perSecond}/s  p50 ${l.delete.latencyMs.p50} ms  p99 ${l.delete.latencyMs.p99} ms  errors ${l.delete.errors}`,
  );
  out.push(
    `  ${'etcd MiB'.padEnd(22)} ${'RSS (db mapped) + tmpfs = memory'.padEnd(34)} ${'db / in use'.padEnd(14)} apiserver RSS`,
  );
  const row = (name: string, s: EtcdSnapshot | null) => {
    if (!s) return;
    out.push(
      `  ${name.padEnd(22)} ${`${mib(s.rssBytes)} (${mib(s.rssShmemBytes)}) + ${mib(s.tmpfsBytes)} = ${mib(s.memoryBytes)}`.padEnd(34)} ` +
        `${`${mib(s.dbSizeBytes)} / ${mib(s.dbSizeInUseBytes)}`.padEnd(14)} ${mib(s.apiRssBytes)}`,
    );
  };
  // The db file is mmapped: its pages are in RSS and in tmpfs; the cgroup charges them once, so does "memory".
  row('idle', l.etcd.before);
  row('after writing', l.etcd.afterWrite);
  row('after deleting all', l.etcd.afterDelete);
  row('after compact+defrag', l.etcd.afterCompactAndDefrag);
  out.push('');

  const peaks = [
    ['product', r.memory.product],
    ['upstream', r.memory.upstream],
  ] as const;
  if (peaks.some(([, m]) => m)) {
    out.push(
      `Memory peaks MiB (every snapshot and storm sample)  ${'apiserver idle / peak'.padEnd(22)} etcd RSS  tmpfs  etcd charged`,
    );
    for (const [name, m] of peaks) {
      if (!m) continue;
      out.push(
        `  ${name.padEnd(50)} ${`${mib(m.apiServerIdleRssBytes)} / ${mib(m.apiServerRssBytes)}`.padEnd(22)} ${String(mib(m.etcdRssBytes)).padEnd(9)} ${String(mib(m.etcdTmpfsBytes)).padEnd(6)} ${mib(m.etcdMemoryBytes)}`,
      );
    }
    out.push(`  product kube-apiserver memory flags: ${r.apiServerFlags.product.join(' ') || 'none'}`, '');
  }
  podSection(r, out);

  const sides = (
    [
      ['product', r.patchStorm.product],
      ['upstream', r.patchStorm.upstream],
      ['target', r.patchStorm.target],
    ] as const
  ).filter((x): x is readonly ['product' | 'upstream' | 'target', StormSide] => x[1] !== null);
  const [firstSide] = sides;
  if (firstSide) {
    const first = firstSide[1].storm;
    out.push(
      `Patch storm (${p.patchStormSeconds} s of random read-modify-write updates, ${first.concurrency} at once; ` +
        (r.memory.product?.pod
          ? "memory = the pod's cgroup working set)"
          : 'memory = etcd RSS + tmpfs, the mapped db counted once)'),
    );
    const col = (text: string) => text.slice(0, 42).padEnd(44);
    out.push(`  ${''.padEnd(16)} ${sides.map(([n]) => col(n)).join('')}`);
    const line = (label: string, f: (s: StormSide) => string) =>
      out.push(`  ${label.padEnd(16)} ${sides.map(([, s]) => col(f(s))).join('')}`);
    line('settings', (s) => settingsSummary(s.settings.flags));
    line('updates/s', (s) => `${s.storm.updatesPerSecond} (p99 ${s.storm.latencyMs.p99} ms)`);
    line('conflicts/errors', (s) => `${s.storm.conflicts} / ${s.storm.errors}`);
    line('maintenance', (s) => maintenanceSummary(s));
    line('memory limit', (s) => `${mib(s.settings.memoryLimitBytes)} MiB`);
    out.push(`  ${'t (s)'.padEnd(16)} ${sides.map(() => col('memory (db) MiB')).join('')}`);
    for (const t of seriesTimes(sides.map(([, s]) => s.storm.samples))) {
      out.push(
        `  ${String(t).padEnd(16)} ${sides.map(([, s]) => col(sampleText(nearest(s.storm.samples, t)))).join('')}`,
      );
    }
    line('verdict', (s) => s.storm.verdict.verdict);
    for (const [name, s] of sides) out.push(`  ${name}: ${s.storm.verdict.reason}`);
    for (const [name, s] of sides)
      if (s.storm.errorSamples.length) out.push(`  ${name} errors: ${s.storm.errorSamples.join(' | ')}`);
    out.push('');
  }

  const c = e.config;
  out.push(
    `Leader election (${e.contenders} contenders over Lease ${e.lease}; lease ${c.leaseDurationSeconds} s / renew deadline ` +
      `${c.renewDeadlineSeconds} s / retry ${c.retryPeriodSeconds} s = YurtHub's ÷ ${e.timeScale})`,
  );
  out.push(
    `  first leader       ${e.firstLeader ?? 'none'} after ${sec(e.firstLeaderMs)} (target ≤ ${sec(e.targets.boundMs.firstLeader)}: ${yes(e.targets.firstLeaderWithinRetryPeriod)})`,
  );
  const crashes = e.kills.filter((k) => k.kind === 'crash').length;
  out.push(
    `  failover           p50 ${sec(e.failoverMs.p50)}, max ${sec(e.failoverMs.max)} over ${e.kills.length} kills (${crashes} crash, ${e.kills.length - crashes} hang)` +
      ` (target ≤ ${sec(e.targets.boundMs.failover)}: ${yes(e.targets.failoverWithinLeasePlusTwoRetries)})` +
      (e.timeScale !== 1
        ? `; unscaled p50 ${sec(e.failoverMs.unscaledP50)}, max ${sec(e.failoverMs.unscaledMax)}`
        : ''),
  );
  out.push(
    `  requests           ${e.requestsPerSecond}/s${e.timeScale !== 1 ? ` (${e.unscaledRequestsPerSecond}/s at real durations)` : ''}; ` +
      `GET p50/p99 ${e.requestLatencyMs.read.p50}/${e.requestLatencyMs.read.p99} ms, write p50/p99 ${e.requestLatencyMs.write.p50}/${e.requestLatencyMs.write.p99} ms, ` +
      `slowest renew ${sec(e.slowestRenewMs)}; errors ${e.errors}`,
  );
  out.push(
    `  two leaders        ${e.overlaps} overlaps; smallest margin ${sec(e.smallestMarginMs)} (design ${sec(e.theoreticalMarginMs)}), ` +
      `smallest gap between leaders ${sec(e.smallestGapMs)}; ${e.acquisitions} acquisitions, lease transitions ${e.leaseTransitions ?? '–'}`,
  );
  if (e.errorSamples.length) out.push(`  errors: ${e.errorSamples.join(' | ')}`);

  const overridden = Object.entries(r.etcdSettings.productOverrides);
  if (overridden.length) {
    out.push(
      '',
      `Note: product etcd flags overridden for this run: ${overridden.map(([k, val]) => `--${k}=${val}`).join(' ')}`,
    );
  }
  if (r.etcdSettings.launchPresetDiffers.length) {
    out.push(
      '',
      'Note: dev/local/etcd etcdFlags.product differs from the rendered product defaults (the probe used the rendered ones):',
    );
    for (const d of r.etcdSettings.launchPresetDiffers)
      out.push(`  --${d.flag}: rendered ${d.rendered}, launch preset ${d.launchPreset ?? '(unset)'}`);
  }
  return `${out.join('\n')}\n`;
}

/** The pod as its cgroups account it (a pod on a real node): idle CPU and memory, peaks against limits, OOM kills. */
function podSection(r: CapacityProbeReport, out: string[]): void {
  const peaks = r.memory.product?.pod;
  const where = r.target.runsOn;
  if (!peaks || where?.kind !== 'real-node') return;
  out.push(
    `Pod ${where.pod} on real node ${where.node}, cgroup figures MiB (working set = usage − inactive file cache; tmpfs included)`,
  );
  const idle = r.pod?.idle;
  if (idle) {
    const parts = Object.entries(idle.containers).map(
      ([n, c]) => `${n} ${mib(c.workingSetBytes)} MiB ${c.cpuMillicores ?? '–'}m`,
    );
    out.push(
      `  idle ${idle.seconds} s   CPU ${idle.cpuMillicores ?? '–'}m, working set ${mib(idle.workingSetBytes)} (${parts.join(', ')})`,
    );
  }
  const limit = (b: number | null) => (b === null ? 'no limit' : mib(b));
  out.push(
    `  peak       pod ${mib(peaks.workingSetBytes)} of ${limit(peaks.limitBytes)}; ` +
      Object.entries(peaks.containers)
        .map(([n, c]) => `${n} ${mib(c.workingSetBytes)} of ${limit(c.limitBytes)}`)
        .join('; '),
  );
  out.push(
    `  usage peak ${mib(peaks.usageBytes)} sampled, ${mib(peaks.kernelPeakUsageBytes)} by the kernel's own count; OOM kills ${peaks.oomKills}`,
    '',
  );
}

function settingsSummary(flags: Record<string, string>): string {
  if (!Object.keys(flags).length) return "the target's own";
  const quota = Number(flags['quota-backend-bytes'] ?? 0);
  const retention = flags['auto-compaction-retention'];
  return [
    quota > 0 ? `quota ${mib(quota)}Mi` : 'no quota',
    retention && retention !== '0' ? `compact ${flags['auto-compaction-mode']} ${retention}` : 'no compaction',
    `snap ${flags['snapshot-count'] ?? '100000'}`,
  ].join(', ');
}

function maintenanceSummary(s: StormSide): string {
  const m = s.storm.maintenance;
  if (!m.length) return 'none needed';
  const defrags = m.filter((a) => a.action === 'defragment').length;
  const disarms = m.filter((a) => a.action === 'disarm').length;
  return `${defrags} defrag, ${disarms} disarm`;
}

function seriesTimes(series: StormSample[][]): number[] {
  const end = Math.max(0, ...series.flatMap((s) => s.map((x) => x.t)));
  const step = end / (SERIES_ROWS - 1);
  return Array.from({ length: SERIES_ROWS }, (_, i) => Math.round(i * step * 10) / 10);
}

function nearest(samples: StormSample[], t: number): StormSample | undefined {
  let best: StormSample | undefined;
  for (const s of samples) if (!best || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
  return best;
}

function sampleText(s: StormSample | undefined): string {
  if (!s) return '–';
  const mem = s.pod?.workingSetBytes ?? s.memoryBytes ?? s.rssBytes;
  return `${mib(mem)} (${mib(s.dbSizeBytes)})${s.alarms?.length ? ` ${s.alarms.join(',')}` : ''}`;
}
