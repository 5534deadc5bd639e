/**
 * kubectl's client-side apply annotation, as kube's lastAppliedManager/lastAppliedUpdater treat it when
 * the applier is `kubectl`: conflicts on fields the annotation still describes are allowed (upgrading
 * from client-side to server-side apply), and the annotation is rewritten to the new configuration.
 */
import type { SchemaNode } from '../../schema/types.ts';
import type { FieldSet } from '../fieldpath/field-set.ts';
import { deepClone, goJsonMarshal, isObject } from '../json-value.ts';
import { compare } from '../typed/compare.ts';
import { toFieldSet } from '../typed/to-field-set.ts';
import type { JsonObject } from '../types.ts';

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

function annotations(obj: JsonObject | undefined): JsonObject | undefined {
  const meta = obj?.metadata;
  return isObject(meta) && isObject(meta.annotations) ? meta.annotations : undefined;
}

/** Fields of the last-applied configuration that still match the live object. */
export function allowedConflictsFromLastApplied(live: JsonObject, schema: SchemaNode): FieldSet | undefined {
  const raw = annotations(live)?.[lastAppliedAnnotation];
  if (typeof raw !== 'string' || raw === '') return undefined;
  let last: unknown;
  try {
    last = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== live.apiVersion) return undefined;
  const c = compare(last, live, schema);
  return toFieldSet(last, schema).difference(c.modified).difference(c.added).difference(c.removed);
}

/** buildLastApplied: the applied object without the annotation, as Go's encoder writes it. */
export function syncLastApplied(result: JsonObject, applied: JsonObject): void {
  const target = annotations(result);
  if (!target || !Object.hasOwn(target, lastAppliedAnnotation)) return;
  const copy = deepClone(applied);
  const own = annotations(copy);
  if (own) delete own[lastAppliedAnnotation];
  target[lastAppliedAnnotation] = `${goJsonMarshal(copy)}\n`;
}
