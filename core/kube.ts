/**
 * The minimal shape of a Kubernetes object as the core sees it. The core never talks to an API server:
 * it builds and compares plain objects, so this type is deliberately loose (any extra top-level field).
 */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/**
 * One content of one object, as the apiserver names it (uid and resourceVersion); undefined for an object
 * that was not read from an apiserver.
 */
export function contentVersion(obj: Pick<KubeObject, 'metadata'> | undefined): string | undefined {
  const uid = obj?.metadata.uid;
  const version = obj?.metadata.resourceVersion;
  return uid && version ? `${uid}@${version}` : undefined;
}

/** Identity of an object independent of its content: what a live-object map is keyed by. */
export function objectKey(
  obj: Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } },
): string {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.slice(0, obj.apiVersion.indexOf('/')) : '';
  // Keyed by group, not group/version: the same object read through another served version is the same object.
  return `${group}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

/** An owner reference that makes `owner` the managing controller of a dependent (deletion cascades). */
export function controllerRef(owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid) {
    throw new Error(
      `${owner.kind} ${owner.metadata.name} has no metadata.uid; an owner reference needs the live object's uid`,
    );
  }
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
