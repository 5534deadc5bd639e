export * from './types.ts';
export { createClusterClient, FIELD_MANAGER, CLUSTER_CA_CONFIGMAP, NodePoolNotServedError } from './client.ts';
export type { ClusterClientOptions } from './client.ts';
export { isTransient, retryPolicy, statusOf } from './retry.ts';
export type { RetryOptions } from './retry.ts';
