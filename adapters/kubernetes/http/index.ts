/** A small Kubernetes API client on node:https for the Lambda functions (no @kubernetes/client-node). */
export type { ClusterConnection } from './connection.ts';
export {
  type Discovery,
  discovery,
  groupVersionPath,
  type ObjectRef,
  type ResourceInfo,
  UnknownKindError,
} from './discovery.ts';
// Not the kubeconfig reader (./kubeconfig.ts): it brings the YAML parser, and the functions import it only
// when a cluster's access needs it, so that it stays out of their cold start.
export { KubeApiError } from './errors.ts';
export {
  createKubeTransport,
  type HttpMethod,
  type KubeRequest,
  type KubeTransport,
  type KubeTransportOptions,
} from './transport.ts';
