/**
 * metadata.managedFields ⇄ per-manager field sets. Managers are identified as kube's
 * BuildManagerIdentifier does: appliers by (manager, subresource), updaters by (manager, apiVersion,
 * subresource). Entries are written in kube's order: Apply before Update, then by time, manager,
 * apiVersion and subresource.
 */

import type { FieldSet } from '../fieldpath/field-set.ts';
import { fieldSetToFieldsV1, fieldsV1ToFieldSet } from '../fieldpath/fields-v1.ts';
import { goJsonMarshal, isObject } from '../json-value.ts';
import type { ManagedFieldsEntry } from '../types.ts';

export interface ManagerRecord {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

export type Managers = Map<string, ManagerRecord>;

export function managerId(r: Pick<ManagerRecord, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: r.manager,
    operation: r.operation,
    apiVersion: r.operation === 'Apply' ? undefined : r.apiVersion,
    subresource: r.subresource || undefined,
  });
}

/** Decode stored entries; throws on entries kube would refuse (unknown fieldsType, malformed paths). */
export function decodeManagedFields(entries: unknown): Managers {
  const out: Managers = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new Error('metadata.managedFields must be a list');
  for (const e of entries) {
    if (!isObject(e)) throw new Error('metadata.managedFields entries must be objects');
    if (e.fieldsType !== undefined && e.fieldsType !== 'FieldsV1')
      throw new Error(`invalid fieldsType: ${String(e.fieldsType)}`);
    const record: ManagerRecord = {
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
      subresource: typeof e.subresource === 'string' && e.subresource ? e.subresource : undefined,
      time: typeof e.time === 'string' ? e.time : undefined,
      set: fieldsV1ToFieldSet(e.fieldsV1),
    };
    const id = managerId(record);
    if (out.has(id)) throw new Error(`duplicate entries for manager ${id}`);
    out.set(id, record);
  }
  return out;
}

const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);

export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const r of managers.values()) {
    if (r.set.isEmpty()) continue;
    // Key order as kube writes the struct: manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource.
    const entry: ManagedFieldsEntry = {
      manager: r.manager,
      operation: r.operation,
      apiVersion: r.apiVersion,
      ...(r.time ? { time: r.time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: fieldSetToFieldsV1(r.set),
      ...(r.subresource ? { subresource: r.subresource } : {}),
    };
    entries.push(entry);
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** metav1.Time's wire form: RFC 3339 in UTC with whole seconds. */
export function kubeTime(now: string): string {
  const ms = Date.parse(now);
  if (Number.isNaN(ms)) return now;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** IgnoreManagedFieldsTimestampsTransformer: when nothing but timestamps changed, keep the old entries. */
export function keepTimestampsIfUnchanged(
  previous: unknown,
  next: ManagedFieldsEntry[],
  objectUnchanged: boolean,
): ManagedFieldsEntry[] {
  if (!objectUnchanged || !Array.isArray(previous) || previous.length !== next.length) return next;
  const strip = (e: unknown) => (isObject(e) ? goJsonMarshal({ ...e, time: null }) : '');
  const before = new Set(previous.map(strip));
  return next.every((e) => before.has(strip(e))) ? (previous as ManagedFieldsEntry[]) : next;
}
