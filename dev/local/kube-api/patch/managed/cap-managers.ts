/**
 * capManagersManager: kube keeps at most 10 Update entries; the oldest are folded, per API version, into
 * one "ancient-changes" entry so managedFields cannot grow without bound.
 */
import { type Managers, managerId } from './entries.ts';

export const maxUpdateManagers = 10;
export const ancientChangesManager = 'ancient-changes';

const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);

export function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers].filter(([, r]) => r.operation === 'Update').map(([id]) => id);
  if (updaters.length <= maxUpdateManagers) return;
  updaters.sort(
    (a, b) => seconds(managers.get(a)!.time) - seconds(managers.get(b)!.time) || (a < b ? -1 : a > b ? 1 : 0),
  );

  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const id of updaters) {
    if (length <= maxUpdateManagers) break;
    const record = managers.get(id)!;
    const bucketId = managerId({ manager: ancientChangesManager, operation: 'Update', apiVersion: record.apiVersion });
    const first = firstOfVersion.get(record.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(record.apiVersion, id);
      continue;
    }
    let bucket = managers.get(bucketId);
    if (!bucket) {
      const seed = managers.get(first)!;
      managers.delete(first);
      bucket = { ...seed, manager: ancientChangesManager, subresource: undefined };
      managers.set(bucketId, bucket);
    }
    bucket.set = record.set.union(bucket.set);
    bucket.time = record.time; // the more recent of the two
    managers.delete(id);
    length--;
  }
}
