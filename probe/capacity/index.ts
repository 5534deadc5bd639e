/** The capacity probe: `runCapacityProbe(options)` → a JSON report; `formatCapacityReport` for people. */

export { type ElectionResult, type KillRecord, overlapFigures } from './election.ts';
export { diffFromLaunchPreset, type EtcdSettings, productEtcdSettings, upstreamEtcdSettings } from './etcd-settings.ts';
export { MEMORY_LIMIT_MARGIN, type MemoryPeaks, memoryPeaks, type PeaksRecord, peaksRecord } from './peaks.ts';
export { formatCapacityReport } from './report.ts';
export type { CapacityProbeOptions, CapacityProbeReport, EtcdFigures, ProbeTarget, StormSide } from './run.ts';
export { DEFAULT_CAPACITY_OPTIONS, REMOTE_PROBE_LEASE, runCapacityProbe, validateOptions } from './run.ts';
export { reportForStorage, STORED_REPORT_MAX_BYTES, StoredReportTooLargeError } from './stored-report.ts';
export { type MemoryVerdict, memoryVerdict } from './verdict.ts';
