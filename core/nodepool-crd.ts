import type { KubeObject } from './kube.ts';
import { NODEPOOL_GROUP } from './nodepool-versions.ts';

/**
 * OpenYurt's NodePool CRD (apps.openyurt.io), written from its published API: v1beta1 served, v1beta2
 * served and stored (v1beta2 adds leader election and pool-scope metadata). It is installed in each
 * cluster's apiserver (infra/crds/nodepool.yaml) and inside every pool-spirit apiserver (bootstrap), so
 * YurtHubs can read their pool there.
 *
 * Conversion is `None` rather than OpenYurt's webhook: neither the local stack nor a pool-spirit runs
 * yurt-manager, and every v1beta1 field exists unchanged in v1beta2, so relabelling apiVersion is a correct
 * conversion for the fields both versions share.
 */
const str = (description?: string) => (description ? { description, type: 'string' } : { type: 'string' });
const int32 = (description: string) => ({ description, format: 'int32', type: 'integer' });
const stringMap = (description: string) => ({ description, type: 'object', additionalProperties: { type: 'string' } });

const taints = {
  description: 'Taints added to every node of the pool.',
  type: 'array',
  items: {
    type: 'object',
    required: ['effect', 'key'],
    properties: {
      effect: str('NoSchedule, PreferNoSchedule or NoExecute.'),
      key: str('The taint key.'),
      timeAdded: { description: 'When a NoExecute taint was added.', format: 'date-time', type: 'string' },
      value: str('The taint value.'),
    },
  },
};

const v1beta1Spec = {
  annotations: stringMap('Annotations added to every node of the pool.'),
  hostNetwork: { description: 'Nodes of the pool run no CNI: their pods use the host network.', type: 'boolean' },
  labels: stringMap('Labels added to every node of the pool.'),
  taints,
  // No enum, as upstream: older tooling wrote lower-case values, and pool-spirit compares case-insensitively.
  type: str('Edge or Cloud.'),
};

const v1beta1Status = {
  nodes: { description: 'Names of the nodes in the pool.', type: 'array', items: { type: 'string' } },
  readyNodeNum: int32('Ready nodes in the pool.'),
  unreadyNodeNum: int32('Nodes of the pool that are not ready.'),
};

const v1beta2Spec = {
  ...v1beta1Spec,
  enableLeaderElection: { description: 'Elect leader YurtHubs in the pool.', type: 'boolean' },
  interConnectivity: {
    description: 'Nodes of the pool reach each other over L2/L3; cannot change after creation.',
    type: 'boolean',
  },
  leaderElectionStrategy: str('mark (from nodes matching leaderNodeLabelSelector) or random.'),
  leaderNodeLabelSelector: stringMap('Nodes eligible as leader when the strategy is mark.'),
  leaderReplicas: {
    description: 'Number of leader YurtHubs (default 1).',
    format: 'int32',
    minimum: 1,
    type: 'integer',
  },
  poolScopeMetadata: {
    description: 'Kinds shared inside the pool (default Service and EndpointSlice).',
    type: 'array',
    items: {
      type: 'object',
      required: ['group', 'kind', 'version'],
      properties: { group: str(), kind: str(), version: str() },
    },
  },
};

const v1beta2Status = {
  ...v1beta1Status,
  conditions: {
    description: 'Observations of the pool, including leader election.',
    type: 'array',
    items: {
      type: 'object',
      properties: {
        lastTransitionTime: { format: 'date-time', type: 'string' },
        message: str(),
        reason: str(),
        status: str('True, False or Unknown.'),
        type: str(),
      },
    },
  },
  leaderEndpoints: { description: 'Addresses of the leader YurtHubs.', type: 'array', items: { type: 'string' } },
};

const printerColumns = [
  { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'The type of the pool' },
  { name: 'ReadyNodes', type: 'integer', jsonPath: '.status.readyNodeNum', description: 'Ready nodes in the pool' },
  { name: 'NotReadyNodes', type: 'integer', jsonPath: '.status.unreadyNodeNum' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

function version(name: string, storage: boolean, spec: object, status: object) {
  return {
    name,
    served: true,
    storage,
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns,
    schema: {
      openAPIV3Schema: {
        description: 'A pool of nodes managed together (OpenYurt).',
        type: 'object',
        properties: {
          apiVersion: str(),
          kind: str(),
          metadata: { type: 'object' },
          spec: { description: 'Desired state of the pool.', type: 'object', properties: spec },
          status: { description: 'Observed state of the pool.', type: 'object', properties: status },
        },
      },
    },
  };
}

export function nodePoolCrd(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `nodepools.${NODEPOOL_GROUP}` },
    spec: {
      group: NODEPOOL_GROUP,
      names: {
        kind: 'NodePool',
        listKind: 'NodePoolList',
        plural: 'nodepools',
        singular: 'nodepool',
        shortNames: ['np'],
        categories: ['all'],
      },
      scope: 'Cluster',
      conversion: { strategy: 'None' },
      versions: [
        version('v1beta1', false, v1beta1Spec, v1beta1Status),
        version('v1beta2', true, v1beta2Spec, v1beta2Status),
      ],
    },
  };
}
