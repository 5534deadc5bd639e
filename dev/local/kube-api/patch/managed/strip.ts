/** Fields kube never records as owned (stripMetaManager), and the endpoint's reset fields. */
import { FieldSet } from '../fieldpath/field-set.ts';
import { fieldPE } from '../fieldpath/path-element.ts';
import type { FieldPathKeys, JsonObject } from '../types.ts';

const fieldPath = (keys: readonly string[]) => keys.map(fieldPE);

const stripSet = FieldSet.of(
  ...[
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'creationTimestamp'],
    ['metadata', 'selfLink'],
    ['metadata', 'uid'],
    ['metadata', 'clusterName'],
    ['metadata', 'generation'],
    ['metadata', 'managedFields'],
    ['metadata', 'resourceVersion'],
  ].map(fieldPath),
);

/** Member-wise removal: `.metadata` itself goes, `.metadata.labels.x` stays. */
export const stripMeta = (set: FieldSet) => set.difference(stripSet);

const alwaysKept = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** The reset fields as a set: explicit ones, or for the status subresource everything but status. */
export function resetFieldSet(
  explicit: readonly FieldPathKeys[] | undefined,
  subresource: string | undefined,
  ...objects: Array<JsonObject | undefined>
): FieldSet {
  if (explicit) return FieldSet.of(...explicit.map(fieldPath));
  if (subresource !== 'status') return new FieldSet();
  const keys = new Set(objects.flatMap((o) => (o ? Object.keys(o) : [])));
  return FieldSet.of(...[...keys].filter((k) => !alwaysKept.has(k)).map((k) => [fieldPE(k)]));
}
