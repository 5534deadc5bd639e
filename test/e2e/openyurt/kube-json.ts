/** The parts of Kubernetes objects, as the apiserver answers them in JSON, that the OpenYurt end-to-end tests read. */

export interface ManagedField {
  manager: string;
  operation: string;
  time?: string;
  subresource?: string;
  fieldsV1?: { 'f:data'?: Record<string, unknown> } & Record<string, unknown>;
}
export interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  deletionTimestamp?: string;
  managedFields?: ManagedField[];
}
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
export interface Taint {
  key: string;
  value?: string;
  effect: string;
}
export interface NodeJson {
  metadata: Meta;
  spec?: { taints?: Taint[] };
  status?: { conditions?: Condition[] };
}
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}
export interface PodJson {
  metadata: Meta;
  spec: { nodeName?: string; tolerations?: Toleration[] };
  status?: { phase?: string; conditions?: Condition[] };
}
export interface LeaseJson {
  metadata: Meta;
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}
