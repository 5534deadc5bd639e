import type * as z from '../../shared/zod.ts';
import { quantityBytes, quantityValue } from '../quantity.ts';
import { COMPONENTS, type ComponentName, type OverrideOp, type PoolSpiritSpec, PoolSpiritSpecSchema } from './api.ts';
import {
  type BundleCatalog,
  DEFAULT_BUNDLE_VERSION,
  DEFAULT_BUNDLES,
  DEFAULT_ETCD_STORAGE,
  DEFAULT_IMAGES,
  DEFAULT_RESOURCES,
  ETCD_WAL_PREALLOCATION_BYTES,
  MAX_QUOTA_BACKEND_BYTES,
  type ResourceRequirements,
} from './defaults.ts';
import { validateOverridePaths } from './override-paths.ts';
import { ownedFlagReason } from './owned-flags.ts';
import type {
  FieldIssue,
  ParseResult,
  ResolvedComponent,
  ResolvedEtcdStorage,
  ResolvedPoolSpiritSpec,
} from './resolved.ts';

export interface ParseOptions {
  /** Known bundles; defaults to the product's catalog. */
  bundles?: BundleCatalog;
  /** Bundle used when spec.version is unset. */
  defaultBundle?: string;
}

const FLAG_NAME = /^[a-z0-9][a-z0-9-]*$/;
const GO_DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

/**
 * Validates a PoolSpirit spec as an operator wrote it and fills in every default. Every problem is
 * reported (not only the first), each naming its field, so the Invalid condition tells the whole story.
 */
export function parsePoolSpiritSpec(raw: unknown, options: ParseOptions = {}): ParseResult {
  const issues: FieldIssue[] = [];
  const apiServer = isRecord(raw) && isRecord(raw.apiServer) ? raw.apiServer : undefined;
  if (apiServer && 'replicas' in apiServer) {
    issues.push({
      field: 'spec.apiServer.replicas',
      message:
        'not supported: the apiserver fronts a single-member in-memory etcd in the same pod, so a second replica ' +
        'would bring its own empty etcd and YurtHubs could elect two leaders; a pool-spirit always runs one pod',
    });
    raw = { ...(raw as Record<string, unknown>), apiServer: omit(apiServer, 'replicas') };
  }
  const parsed = PoolSpiritSpecSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: [...issues, ...zodIssues(parsed.error.issues)] };
  const spec = parsed.data;

  const bundles = options.bundles ?? DEFAULT_BUNDLES;
  const bundleVersion = spec.version ?? options.defaultBundle ?? DEFAULT_BUNDLE_VERSION;
  // Own keys only: a version named like an Object.prototype member ("constructor") is not a bundle.
  const bundle = Object.hasOwn(bundles, bundleVersion) ? bundles[bundleVersion] : undefined;
  if (!bundle) {
    issues.push({
      field: 'spec.version',
      message: `unknown bundle "${bundleVersion}"; known bundles: ${Object.keys(bundles).join(', ')}`,
    });
  }

  const resolved = {} as Record<ComponentName, ResolvedComponent>;
  for (const name of COMPONENTS) {
    resolved[name] = resolveComponent(name, spec[name] ?? {}, bundle?.[name] ?? '', issues);
  }
  const storage = resolveStorage(spec.etcd?.storage ?? {}, resolved.etcd, issues);
  const overrides = (spec.overrides ?? []) as OverrideOp[];
  issues.push(...validateOverridePaths(overrides));

  if (issues.length > 0) return { ok: false, issues };
  const result: ResolvedPoolSpiritSpec = {
    nodePool: spec.nodePool,
    version: bundleVersion,
    apiServer: resolved.apiServer,
    etcd: { ...resolved.etcd, storage },
    agent: resolved.agent,
    overrides,
    paused: spec.paused ?? false,
  };
  return { ok: true, spec: result };
}

type ComponentInput = NonNullable<PoolSpiritSpec['agent']>;

function resolveComponent(
  name: ComponentName,
  input: ComponentInput,
  bundleVersion: string,
  issues: FieldIssue[],
): ResolvedComponent {
  const at = `spec.${name}`;
  const repository = input.image ?? DEFAULT_IMAGES[name];
  const version = input.version ?? bundleVersion;
  let image = `${repository}:${version}`;
  if (repository.includes('@')) {
    image = repository; // pinned by digest: the digest wins, version stays informational
  } else if (lastPathSegment(repository).includes(':')) {
    issues.push({
      field: `${at}.image`,
      message: `"${repository}" carries a tag; give the repository only and put the tag in ${at}.version`,
    });
  }
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(version) && !repository.includes('@')) {
    issues.push({ field: `${at}.version`, message: `"${version}" is not a valid image tag` });
  }

  const extraArgs = input.extraArgs ?? {};
  for (const flag of Object.keys(extraArgs)) {
    const field = `${at}.extraArgs.${flag}`;
    if (flag.startsWith('-')) {
      issues.push({ field, message: `write the flag name without leading dashes ("${flag.replace(/^-+/, '')}")` });
      continue;
    }
    if (!FLAG_NAME.test(flag)) {
      issues.push({ field, message: 'a flag name has lowercase letters, digits and dashes only' });
      continue;
    }
    const reason = ownedFlagReason(name, flag);
    if (reason)
      issues.push({ field, message: `--${flag} is owned by pool-spirit and cannot be overridden: ${reason}` });
  }

  const resources = mergeResources(DEFAULT_RESOURCES[name], input.resources ?? {});
  for (const [resource, request] of Object.entries(resources.requests)) {
    const limit = Object.hasOwn(resources.limits, resource) ? resources.limits[resource] : undefined;
    if (limit !== undefined && quantityValue(request) > quantityValue(limit)) {
      issues.push({
        field: `${at}.resources.requests.${resource}`,
        message: `request ${request} exceeds the limit ${limit} (${at}.resources.limits.${resource})`,
      });
    }
  }
  return { image, version, resources, extraArgs: { ...extraArgs } };
}

function mergeResources(
  defaults: ResourceRequirements,
  input: { requests?: Record<string, string | number>; limits?: Record<string, string | number> },
): ResourceRequirements {
  return {
    requests: { ...defaults.requests, ...input.requests },
    limits: { ...defaults.limits, ...input.limits },
  };
}

function resolveStorage(
  input: NonNullable<NonNullable<PoolSpiritSpec['etcd']>['storage']>,
  etcd: ResolvedComponent,
  issues: FieldIssue[],
): ResolvedEtcdStorage {
  const at = 'spec.etcd.storage';
  const d = DEFAULT_ETCD_STORAGE;
  const mode = input.autoCompaction?.mode ?? d.autoCompaction.mode;
  const retention =
    input.autoCompaction?.retention ?? (mode === d.autoCompaction.mode ? d.autoCompaction.retention : '10000');
  if (mode === 'periodic' && !GO_DURATION.test(retention)) {
    issues.push({
      field: `${at}.autoCompaction.retention`,
      message: `"${retention}" is not a duration such as 30s, 1m or 1h (mode periodic)`,
    });
  }
  if (mode === 'revision' && !/^[1-9][0-9]*$/.test(retention)) {
    issues.push({
      field: `${at}.autoCompaction.retention`,
      message: `"${retention}" is not a positive revision count (mode revision)`,
    });
  }
  const sizeLimit = input.sizeLimit ?? d.sizeLimit;
  const quota = quantityBytes(input.quotaBackendBytes ?? d.quotaBackendBytes);
  const sizeBytes = quantityBytes(sizeLimit);
  if (quota > MAX_QUOTA_BACKEND_BYTES) {
    issues.push({
      field: `${at}.quotaBackendBytes`,
      message: 'must be at most 8Gi (etcd does not support larger backends well)',
    });
  } else if (quota <= 0) {
    issues.push({
      field: `${at}.quotaBackendBytes`,
      message: 'must be positive: without a quota a write storm grows etcd until it is OOM-killed',
    });
  } else if (quota + ETCD_WAL_PREALLOCATION_BYTES > sizeBytes) {
    issues.push({
      field: `${at}.quotaBackendBytes`,
      message: `${input.quotaBackendBytes ?? d.quotaBackendBytes} does not fit in sizeLimit ${sizeLimit}: etcd also preallocates 128Mi of WAL on the same volume`,
    });
  }
  const memoryLimit = etcd.resources.limits.memory;
  if (memoryLimit !== undefined && quantityValue(memoryLimit) < sizeBytes) {
    issues.push({
      field: 'spec.etcd.resources.limits.memory',
      message: `${memoryLimit} is below storage.sizeLimit ${sizeLimit}: the in-memory data volume counts against the etcd container's memory`,
    });
  }
  return {
    medium: 'Memory',
    sizeLimit,
    quotaBackendBytes: quota,
    autoCompaction: { mode, retention },
    snapshotCount: input.snapshotCount ?? d.snapshotCount,
    maxWals: input.maxWals ?? d.maxWals,
    maxSnapshots: input.maxSnapshots ?? d.maxSnapshots,
  };
}

/** zod issues → field issues with `spec.`-rooted paths, one per unknown key. */
export function zodIssues(issues: readonly z.core.$ZodIssue[], root = 'spec'): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    const field = fieldPath(root, issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ field: fieldPath(root, [...issue.path, key]), message: `unknown field "${key}"` });
    } else if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
      out.push({ field, message: 'required' });
    } else {
      out.push({ field, message: issue.message });
    }
  }
  return out;
}

export function fieldPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const step of path) out += typeof step === 'number' ? `[${step}]` : `.${String(step)}`;
  return out;
}

function lastPathSegment(image: string): string {
  return image.slice(image.lastIndexOf('/') + 1);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function omit(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _, ...rest } = obj;
  return rest;
}
