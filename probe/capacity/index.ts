/** The capacity probe: `runCapacityProbe(options)` → a JSON report; `formatCapacityReport` for people. */
export { runCapacityProbe, validateOptions, DEFAULT_CAPACITY_OPTIONS, REMOTE_PROBE_LEASE } from './run.ts';
export type { CapacityProbeOptions, CapacityProbeReport, ProbeTarget, StormSide, EtcdFigures } from './run.ts';
export { formatCapacityReport } from './report.ts';
export { memoryVerdict, type MemoryVerdict } from './verdict.ts';
export { overlapFigures, type ElectionResult, type KillRecord } from './election.ts';
export { productEtcdSettings, upstreamEtcdSettings, diffFromLaunchPreset, type EtcdSettings } from './etcd-settings.ts';
export { memoryPeaks, peaksRecord, MEMORY_LIMIT_MARGIN, type MemoryPeaks, type PeaksRecord } from './peaks.ts';
