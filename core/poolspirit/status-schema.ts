import * as z from 'zod';
import { PHASES } from './names.ts';

/** The PoolSpirit status (written by the reconciler and the agent), as its CRD schema is generated. */
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
          .describe(
            'When the agent last read the Lease; older than the agent staleness bound means the other fields are unknown.',
          ),
      })
      .optional()
      .describe(
        'Reported by the agent from the kube-system/yurthub Lease; holder absent when no one holds an unexpired lease.',
      ),
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
      .describe(
        'Reported by the agent; healthy and the sizes are absent while etcd could not be read for longer than the staleness bound.',
      ),
    certificates: z
      .object({
        notAfter: z
          .string()
          .optional()
          .meta({ format: 'date-time' })
          .describe('Earliest expiry of the leaf certificates.'),
        caNotAfter: z.string().optional().meta({ format: 'date-time' }),
      })
      .optional(),
  })
  .describe('Observed state of a pool-spirit.');
export type PoolSpiritStatus = z.infer<typeof PoolSpiritStatusSchema>;
