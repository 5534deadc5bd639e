/**
 * An object as the local API server reads, stores and serves it: the JSON of any kind. The product's own
 * view of a Kubernetes object is core/kube.ts's KubeObject; this type is the server's, which must accept and
 * echo whatever a client sends, so only apiVersion, kind and the metadata fields it reads by name are typed
 * (as kube's ObjectMeta defines them) and every other field is `unknown` until checked.
 *
 * The types say what the server relies on, not what a client sent: a request body gets this type when it
 * is decoded (decodeObject checks that it and its metadata are objects and sets apiVersion and kind),
 * before meta() fills a missing metadata and before validation; the code that reads a body's fields checks
 * them first. `name` is typed as always there because every object the server stores or serves has one (a
 * create fills it from generateName, and validateName refuses an object without); `uid` is set by the
 * store on create, so an object being created has none. Nested fields are `unknown`: code that reads them
 * checks them, or (for stored built-in kinds, whose schema was checked on write) reads them through the
 * kind's type from kubernetes-types, the declarations the built-in schemas were generated from.
 */
import type { ObjectMeta as KubeObjectMeta, OwnerReference } from '../../../core/kube.ts';

export interface ApiObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/**
 * metav1.ObjectMeta: the product's view of it (core/kube.ts) and the fields only the server reads or writes
 * by name; any other field passes through.
 */
export interface ObjectMeta extends KubeObjectMeta {
  generateName?: string;
  selfLink?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  finalizers?: string[];
  managedFields?: unknown[];
}

export type { OwnerReference };

/** Any other JSON object the server reads or builds (a spec, a Status, a list): fields `unknown` until checked. */
export type JsonObject = Record<string, unknown>;
