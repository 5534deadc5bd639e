import { z } from 'zod';
import { QUANTITY_PATTERN, isQuantity } from '../quantity.ts';

/**
 * The PoolSpirit API (poolspirit.io/v1alpha1), one object per edge NodePool.
 *
 * Why cluster-scoped: the NodePool it serves is cluster-scoped, and a PoolSpirit owns cluster-scoped
 * objects (the ClusterRole/ClusterRoleBinding that let its agent write its own status). Kubernetes garbage
 * collection only honours owner references from a namespaced dependent to an owner that is cluster-scoped
 * or in the same namespace, and a cluster-scoped dependent may only have cluster-scoped owners, so a
 * namespaced PoolSpirit could not own its ClusterRole. The namespaced objects it owns (Secrets, Deployment,
 * Service, ServiceAccount, Role, ConfigMap) live in the product's namespace (DEFAULT_NAMESPACE).
 *
 * The schemas describe shape only. Defaults and cross-field rules live in parse.ts, and the CRD carries no
 * `default:` values on purpose: defaults written by the API server would freeze into every stored object,
 * so a new product default (or bundle) could never reach pools that did not pin a value.
 */
export const GROUP = 'poolspirit.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'PoolSpirit';
export const PLURAL = 'poolspirits';
export const SINGULAR = 'poolspirit';
export const SHORT_NAMES = ['ps'];
export const DEFAULT_NAMESPACE = 'pool-spirit-system';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const QUANTITY_MESSAGE = 'must be a Kubernetes quantity such as 500m, 256Mi or 1Gi';

/** A resource quantity: an integer or a string in the API server's quantity grammar. */
export const QuantitySchema = z
  .union([z.int().min(0), z.string().regex(new RegExp(QUANTITY_PATTERN), { error: QUANTITY_MESSAGE })], { error: QUANTITY_MESSAGE })
  .refine((q) => isQuantity(q) && !String(q).startsWith('-'), { error: 'must not be negative' })
  .meta({ 'x-kubernetes-int-or-string': true, pattern: QUANTITY_PATTERN });

const ResourceListSchema = z.record(z.string(), QuantitySchema);

export const ResourcesSchema = z
  .strictObject({
    requests: ResourceListSchema.optional().describe('Minimum resources, e.g. {cpu: 100m, memory: 256Mi}.'),
    limits: ResourceListSchema.optional().describe('Maximum resources. For etcd, memory must cover storage.sizeLimit.'),
  })
  .describe('Resource requests and limits of the container; merged per resource over the product defaults.');

const componentFields = {
  image: z
    .string()
    .min(1)
    .describe('Image repository without a tag (e.g. registry.k8s.io/etcd), or a full reference with @sha256 digest.'),
  version: z.string().min(1).max(128).describe('Image tag; defaults to the bundle version of this component.'),
  resources: ResourcesSchema,
  extraArgs: z
    .record(z.string(), z.string())
    .describe('Extra command-line flags, name (without leading dashes) to value. Flags the product owns are rejected.'),
};

function component(description: string) {
  return z
    .strictObject({
      image: componentFields.image.optional(),
      version: componentFields.version.optional(),
      resources: componentFields.resources.optional(),
      extraArgs: componentFields.extraArgs.optional(),
    })
    .describe(description);
}

export const AutoCompactionSchema = z
  .strictObject({
    mode: z.enum(['periodic', 'revision']).optional().describe('periodic (time window) or revision (revision count).'),
    retention: z
      .string()
      .optional()
      .describe('For periodic a duration such as 1m or 30s; for revision a count such as 10000.'),
  })
  .describe('etcd built-in compaction of old revisions.');

export const EtcdStorageSchema = z
  .strictObject({
    medium: z
      .literal('Memory')
      .optional()
      .describe('Only Memory: pool data is a cache the YurtHubs re-upload, so it must not outlive the pod.'),
    sizeLimit: QuantitySchema.optional().describe('Size limit of the in-memory data volume.'),
    quotaBackendBytes: QuantitySchema.optional().describe('etcd --quota-backend-bytes (e.g. 512Mi).'),
    autoCompaction: AutoCompactionSchema.optional(),
    snapshotCount: z.int().min(100).optional().describe('etcd --snapshot-count: raft entries held in memory between snapshots.'),
    maxWals: z.int().min(1).optional().describe('etcd --max-wals: WAL files kept (each preallocates 64MB of memory).'),
    maxSnapshots: z.int().min(1).optional().describe('etcd --max-snapshots.'),
  })
  .describe('Where and how etcd keeps its data.');

const EtcdComponentSchema = z
  .strictObject({
    image: componentFields.image.optional(),
    version: componentFields.version.optional(),
    resources: componentFields.resources.optional(),
    extraArgs: componentFields.extraArgs.optional(),
    storage: EtcdStorageSchema.optional(),
  })
  .describe('The single-member, in-memory etcd. A version change is a planned re-seed, never an in-place upgrade.');

export const OverrideOpSchema = z
  .strictObject({
    op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: z
      .string()
      .describe('JSON pointer into the rendered Deployment; an array step may be written name=<x> to select by name.'),
    from: z.string().optional().describe('Source pointer for move and copy.'),
    value: z.unknown().optional().describe('Value for add, replace and test.'),
  })
  .describe('One JSON-patch operation on the rendered Deployment.');

export const PoolSpiritSpecSchema = z
  .strictObject({
    nodePool: z
      .string()
      .max(253)
      .regex(DNS_SUBDOMAIN, { error: 'must be a NodePool name (a DNS subdomain)' })
      .describe('Name of the NodePool this pool-spirit serves.'),
    version: z.string().min(1).optional().describe('Bundle version: the default version of every component.'),
    apiServer: component('The pool-scoped kube-apiserver. Always one replica (see docs): it fronts a single-member in-memory etcd.').optional(),
    etcd: EtcdComponentSchema.optional(),
    agent: component('The agent that bootstraps the pool-spirit apiserver and reports leader and etcd health.').optional(),
    overrides: z
      .array(OverrideOpSchema)
      .max(64)
      .optional()
      .describe('JSON-patch operations applied last to the rendered Deployment, for custom component implementations.'),
    paused: z.boolean().optional().describe('When true the reconciler leaves the rendered objects untouched.'),
  })
  .describe('Desired state of a pool-spirit.');

export type PoolSpiritSpec = z.input<typeof PoolSpiritSpecSchema>;
export type OverrideOp = z.infer<typeof OverrideOpSchema>;
export type ComponentName = 'apiServer' | 'etcd' | 'agent';
export const COMPONENTS: readonly ComponentName[] = ['apiServer', 'etcd', 'agent'];

export const CONDITION_TYPES = ['CertificatesReady', 'WorkloadReady', 'Bootstrapped', 'LeaderElected', 'Available'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];
export const PHASES = ['Pending', 'Provisioning', 'Running', 'Degraded', 'Paused', 'Invalid'] as const;
export type Phase = (typeof PHASES)[number];

export const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.string().meta({ format: 'date-time' }),
  reason: z.string(),
  message: z.string(),
});
export type Condition = z.infer<typeof ConditionSchema>;

export const ComponentVersionsSchema = z.object({
  bundle: z.string().optional(),
  apiServer: z.string().optional(),
  etcd: z.string().optional(),
  agent: z.string().optional(),
});
export type ComponentVersions = z.infer<typeof ComponentVersionsSchema>;

export const PoolSpiritStatusSchema = z
  .object({
    observedGeneration: z.int().min(0).optional(),
    phase: z.enum(PHASES).optional(),
    conditions: z
      .array(ConditionSchema)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
    endpoint: z.string().optional().describe('URL of the pool-spirit apiserver inside the cluster.'),
    versions: z
      .object({ desired: ComponentVersionsSchema.optional(), current: ComponentVersionsSchema.optional() })
      .optional(),
    leader: z
      .object({
        holder: z.string().optional().describe('Node name holding the YurtHub leader Lease.'),
        renewTime: z.string().optional().meta({ format: 'date-time' }),
        transitions: z.int().min(0).optional(),
        observedTime: z
          .string()
          .optional()
          .meta({ format: 'date-time' })
          .describe('When the agent last read the Lease; older than the agent staleness bound means the other fields are unknown.'),
      })
      .optional()
      .describe('Reported by the agent from the kube-system/yurthub Lease; holder absent when no one holds an unexpired lease.'),
    bootstrap: z
      .object({
        appliedHash: z.string().optional().describe('Bootstrap content hash the agent last applied.'),
        appliedTime: z.string().optional().meta({ format: 'date-time' }),
      })
      .optional(),
    etcd: z
      .object({
        healthy: z.boolean().optional(),
        dbSizeBytes: z.int().min(0).optional(),
        dbSizeInUseBytes: z.int().min(0).optional(),
        quotaBackendBytes: z.int().min(0).optional(),
        alarms: z.array(z.string()).optional(),
        lastDefragTime: z.string().optional().meta({ format: 'date-time' }),
        observedTime: z.string().optional().meta({ format: 'date-time' }).describe('When the agent last read etcd.'),
      })
      .optional()
      .describe('Reported by the agent; healthy and the sizes are absent while etcd could not be read for longer than the staleness bound.'),
    certificates: z
      .object({
        notAfter: z.string().optional().meta({ format: 'date-time' }).describe('Earliest expiry of the leaf certificates.'),
        caNotAfter: z.string().optional().meta({ format: 'date-time' }),
      })
      .optional(),
  })
  .describe('Observed state of a pool-spirit.');
export type PoolSpiritStatus = z.infer<typeof PoolSpiritStatusSchema>;

export interface PoolSpirit {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
    [field: string]: unknown;
  };
  spec: PoolSpiritSpec;
  status?: PoolSpiritStatus;
}
