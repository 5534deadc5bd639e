import * as z from 'zod';
import { zodToStructural } from '../crd/structural.ts';
import type { KubeObject } from '../kube.ts';
import { GROUP, KIND, PLURAL, PoolSpiritSpecSchema, SHORT_NAMES, SINGULAR, VERSION } from './api.ts';
import { PoolSpiritStatusSchema } from './status-schema.ts';

/** The PoolSpirit CRD, generated from the same zod schemas the reconciler validates with. */
export function poolSpiritCrd(): KubeObject {
  const root = z.object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    spec: PoolSpiritSpecSchema,
    status: PoolSpiritStatusSchema.optional(),
  });
  const schema = zodToStructural(root);
  (schema.properties as Record<string, unknown>).metadata = { type: 'object' };
  schema.required = ['spec'];
  schema.description = 'A pool-spirit: a pool-scoped kube-apiserver and in-memory etcd serving one edge NodePool.';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'pool-spirit' } },
    spec: {
      group: GROUP,
      names: {
        kind: KIND,
        listKind: `${KIND}List`,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: SHORT_NAMES,
        categories: ['all', 'openyurt'],
      },
      scope: 'Cluster',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Pool', type: 'string', jsonPath: '.spec.nodePool', description: 'NodePool served' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
            {
              name: 'Leader',
              type: 'string',
              jsonPath: '.status.leader.holder',
              description: 'Node holding the YurtHub leader Lease',
            },
            {
              name: 'Version',
              type: 'string',
              jsonPath: '.status.versions.current.bundle',
              description: 'Bundle version running',
            },
            { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}
