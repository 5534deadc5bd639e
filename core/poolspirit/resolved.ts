import type { ComponentName, OverrideOp } from './api.ts';
import type { ResourceRequirements } from './defaults.ts';

/** A component with every default filled in: what the renderer works from. */
export interface ResolvedComponent {
  /** Full image reference the container runs (repository:version, or repository@digest). */
  image: string;
  version: string;
  resources: ResourceRequirements;
  extraArgs: Record<string, string>;
}

export interface ResolvedEtcdStorage {
  medium: 'Memory';
  sizeLimit: string | number;
  quotaBackendBytes: number;
  autoCompaction: { mode: 'periodic' | 'revision'; retention: string };
  snapshotCount: number;
  maxWals: number;
  maxSnapshots: number;
}

export interface ResolvedPoolSpiritSpec {
  nodePool: string;
  /** Bundle version. */
  version: string;
  apiServer: ResolvedComponent;
  etcd: ResolvedComponent & { storage: ResolvedEtcdStorage };
  agent: ResolvedComponent;
  overrides: OverrideOp[];
  paused: boolean;
}

export interface FieldIssue {
  /** Path in the object, e.g. `spec.etcd.extraArgs.data-dir`. */
  field: string;
  message: string;
}

export type ParseResult = { ok: true; spec: ResolvedPoolSpiritSpec } | { ok: false; issues: FieldIssue[] };

export type { ComponentName };
