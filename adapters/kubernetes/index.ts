export type { ClusterClientOptions } from './client.ts';
export { CLUSTER_CA_CONFIGMAP, createClusterClient, FIELD_MANAGER, NodePoolNotServedError } from './client.ts';
export type { RetryOptions } from './retry.ts';
export { isTransient, retryPolicy, statusOf } from './retry.ts';
export * from './types.ts';
