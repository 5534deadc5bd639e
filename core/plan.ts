import { covers } from './diff.ts';
import { contentVersion, type KubeObject, objectKey } from './kube.ts';

export { covers, fieldDiffs } from './diff.ts';
export { stableHash } from './hash.ts';
export { type ForeignEntry, foreignEntries, foreignEntriesPatch, type JsonPatchOp } from './render/foreign-entries.ts';
export { meaningfulTransitions, observeWorkload, poolSpiritStatus } from './status.ts';

/**
 * The desired objects that need a write: missing from the cluster, or with some field the desired object
 * sets differing from the live one (see fieldDiffs). `live` is keyed by objectKey; a key mapped to
 * undefined (or absent) means the object does not exist. A steady pool yields an empty list: zero writes.
 */
export function objectsToApply(
  desired: readonly KubeObject[],
  live: ReadonlyMap<string, KubeObject | undefined>,
): KubeObject[] {
  return desired.filter((obj) => {
    const current = live.get(objectKey(obj));
    return current === undefined || !covers(obj, current, contentVersion(current));
  });
}

/**
 * Live objects labelled as pool-spirit's for this pool that are no longer desired (e.g. after a rename):
 * candidates for deletion. Owner references already cascade when the PoolSpirit goes; this covers drift.
 */
export function objectsToDelete(desired: readonly KubeObject[], liveOwned: readonly KubeObject[]): KubeObject[] {
  const wanted = new Set(desired.map(objectKey));
  return liveOwned.filter((obj) => !wanted.has(objectKey(obj)));
}
