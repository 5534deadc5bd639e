/**
 * An object as the local API server reads, stores and serves it: the JSON of any kind, including request
 * bodies not yet validated, so no field is known to exist. The product's own view of a Kubernetes object is
 * core/kube.ts's KubeObject; this type is the server's, which must accept and echo whatever a client sends.
 */
// `any`, not `unknown`: the server reads nested fields of documents of every kind without a schema for each.
export type ApiObject = Record<string, any>;
