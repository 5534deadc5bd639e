import * as z from '../../shared/zod.ts';
import { isQuantity, QUANTITY_PATTERN } from '../quantity.ts';
import type { API_VERSION, KIND } from './names.ts';

/**
 * The PoolSpirit API (poolspirit.io/v1alpha1), one object per edge NodePool.
 *
 * Why cluster-scoped: the NodePool it serves is cluster-scoped, one PoolSpirit per pool, named after it.
 * Kubernetes garbage collection honours owner references from a namespaced dependent to an owner that is
 * cluster-scoped, so the namespaced objects it owns (Secrets, Deployment, Service, ServiceAccount,
 * ConfigMap), which live in the product's namespace (DEFAULT_NAMESPACE), go with it. It owns no RBAC
 * objects: the agent's rights are static (infra/cluster/agent/rbac.yaml, docs/security.md).
 *
 * The schemas describe shape only. Defaults and cross-field rules live in parse.ts, and the CRD carries no
 * `default:` values on purpose: defaults written by the API server would freeze into every stored object,
 * so a new product default (or bundle) could never reach pools that did not pin a value.
 */
export * from './names.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const QUANTITY_MESSAGE = 'must be a Kubernetes quantity such as 500m, 256Mi or 1Gi';

/** `schema` carrying a description, which the CRD generator (crd.ts) copies into the CRD. */
function described<T extends z.ZodMiniType>(schema: T, description: string): T {
  return schema.check(z.describe(description));
}

/** An optional field with its CRD description. */
function optionalField<T extends z.ZodMiniType>(schema: T, description: string) {
  return described(z.optional(schema), description);
}

/** A resource quantity: an integer or a string in the API server's quantity grammar. */
export const QuantitySchema = z
  .union(
    [z.int().check(z.gte(0)), z.string().check(z.regex(new RegExp(QUANTITY_PATTERN), { error: QUANTITY_MESSAGE }))],
    { error: QUANTITY_MESSAGE },
  )
  .check(
    z.refine((q) => isQuantity(q) && !String(q).startsWith('-'), { error: 'must not be negative' }),
    z.meta({ 'x-kubernetes-int-or-string': true, pattern: QUANTITY_PATTERN }),
  );

const ResourceListSchema = z.record(z.string(), QuantitySchema);

export const ResourcesSchema = described(
  z.strictObject({
    requests: optionalField(ResourceListSchema, 'Minimum resources, e.g. {cpu: 100m, memory: 256Mi}.'),
    limits: optionalField(ResourceListSchema, 'Maximum resources. For etcd, memory must cover storage.sizeLimit.'),
  }),
  'Resource requests and limits of the container; merged per resource over the product defaults.',
);

const componentFields = {
  image: described(
    z.string().check(z.minLength(1)),
    'Image repository without a tag (e.g. registry.k8s.io/etcd), or a full reference with @sha256 digest.',
  ),
  version: described(
    z.string().check(z.minLength(1), z.maxLength(128)),
    'Image tag; defaults to the bundle version of this component.',
  ),
  resources: ResourcesSchema,
  extraArgs: described(
    z.record(z.string(), z.string()),
    'Extra command-line flags, name (without leading dashes) to value. Flags the product owns are rejected.',
  ),
};

function component(description: string) {
  return described(
    z.strictObject({
      image: z.optional(componentFields.image),
      version: z.optional(componentFields.version),
      resources: z.optional(componentFields.resources),
      extraArgs: z.optional(componentFields.extraArgs),
    }),
    description,
  );
}

export const AutoCompactionSchema = described(
  z.strictObject({
    mode: optionalField(z.enum(['periodic', 'revision']), 'periodic (time window) or revision (revision count).'),
    retention: optionalField(
      z.string(),
      'For periodic a duration such as 1m or 30s; for revision a count such as 10000.',
    ),
  }),
  'etcd built-in compaction of old revisions.',
);

export const EtcdStorageSchema = described(
  z.strictObject({
    medium: optionalField(
      z.literal('Memory'),
      'Only Memory: pool data is a cache the YurtHubs re-upload, so it must not outlive the pod.',
    ),
    sizeLimit: optionalField(QuantitySchema, 'Size limit of the in-memory data volume.'),
    quotaBackendBytes: optionalField(QuantitySchema, 'etcd --quota-backend-bytes (e.g. 512Mi).'),
    autoCompaction: z.optional(AutoCompactionSchema),
    snapshotCount: optionalField(
      z.int().check(z.gte(100)),
      'etcd --snapshot-count: raft entries held in memory between snapshots.',
    ),
    maxWals: optionalField(
      z.int().check(z.gte(1)),
      'etcd --max-wals: WAL files kept (each preallocates 64MB of memory).',
    ),
    maxSnapshots: optionalField(z.int().check(z.gte(1)), 'etcd --max-snapshots.'),
  }),
  'Where and how etcd keeps its data.',
);

const EtcdComponentSchema = described(
  z.strictObject({
    image: z.optional(componentFields.image),
    version: z.optional(componentFields.version),
    resources: z.optional(componentFields.resources),
    extraArgs: z.optional(componentFields.extraArgs),
    storage: z.optional(EtcdStorageSchema),
  }),
  'The single-member, in-memory etcd. A version change is a planned re-seed, never an in-place upgrade.',
);

export const OverrideOpSchema = described(
  z.strictObject({
    op: z.enum(['add', 'remove', 'replace', 'move', 'copy', 'test']),
    path: described(
      z.string(),
      'JSON pointer into the rendered Deployment; an array step may be written name=<x> to select by name.',
    ),
    from: optionalField(z.string(), 'Source pointer for move and copy.'),
    value: optionalField(z.unknown(), 'Value for add, replace and test.'),
  }),
  'One JSON-patch operation on the rendered Deployment.',
);

export const PoolSpiritSpecSchema = described(
  z.strictObject({
    nodePool: described(
      z
        .string()
        .check(z.maxLength(253), z.regex(DNS_SUBDOMAIN, { error: 'must be a NodePool name (a DNS subdomain)' })),
      'Name of the NodePool this pool-spirit serves.',
    ),
    version: optionalField(z.string().check(z.minLength(1)), 'Bundle version: the default version of every component.'),
    apiServer: z.optional(
      component(
        'The pool-scoped kube-apiserver. Always one replica (see docs): it fronts a single-member in-memory etcd.',
      ),
    ),
    etcd: z.optional(EtcdComponentSchema),
    agent: z.optional(
      component('The agent that bootstraps the pool-spirit apiserver and reports leader and etcd health.'),
    ),
    overrides: optionalField(
      z.array(OverrideOpSchema).check(z.maxLength(64)),
      'JSON-patch operations applied last to the rendered Deployment, for custom component implementations.',
    ),
    paused: optionalField(z.boolean(), 'When true the reconciler leaves the rendered objects untouched.'),
  }),
  'Desired state of a pool-spirit.',
);

export type PoolSpiritSpec = z.input<typeof PoolSpiritSpecSchema>;
export type OverrideOp = z.infer<typeof OverrideOpSchema>;
export type ComponentName = 'apiServer' | 'etcd' | 'agent';
export const COMPONENTS: readonly ComponentName[] = ['apiServer', 'etcd', 'agent'];

export const CONDITION_TYPES = [
  'CertificatesReady',
  'WorkloadReady',
  'Bootstrapped',
  'LeaderElected',
  'Available',
  'YurtCoordinatorObjectsReady',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

// The status schema lives in status-schema.ts: only the CRD is generated from it, so the functions, which
// validate specs but never statuses, do not build it on every cold start.
import type { PoolSpiritStatus } from './status-schema.ts';

export type { ComponentVersions, Condition, PoolSpiritStatus } from './status-schema.ts';

// A type alias, not an interface: an alias is assignable to KubeObject's index signature, so a PoolSpirit
// is applied as it is, with no cast.
export type PoolSpirit = {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }>;
    [field: string]: unknown;
  };
  spec: PoolSpiritSpec;
  status?: PoolSpiritStatus;
};
