/**
 * The modules the HTTP layer calls but other parts own: patch algorithms, schemas, selectors, Table
 * printing, name validation, fault injection and garbage collection. Loaded once here so call sites stay
 * plain function calls.
 */
import type { SchemaNode, StatusCause } from '../schema/types.ts';
import type { ManagedFieldsEntry, ManagedFieldsUpdateInput, ServerSideApplyInput, JsonObject } from '../patch/types.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
export type KubeObject = Record<string, any>;

export interface PatchModule {
  applyMergePatch(target: JsonObject, patch: unknown): JsonObject;
  applyJsonPatch(target: JsonObject, ops: unknown): JsonObject;
  applyStrategicMergePatch(target: JsonObject, patch: unknown, schema: SchemaNode | undefined): JsonObject;
  serverSideApply(input: ServerSideApplyInput): JsonObject;
  updateManagedFields(input: ManagedFieldsUpdateInput): ManagedFieldsEntry[];
}

export interface SchemaModule {
  builtinSchema(group: string, version: string, kind: string): SchemaNode | undefined;
  crdVersionSchema(crd: KubeObject, version: string): SchemaNode | undefined;
  validateCrd(crd: KubeObject): StatusCause[];
  withCrdDefaults<T extends object>(crd: T): T;
  strictDecodingError(kind: string, unknownFields: string[], version?: string): string;
  validateAgainstSchema(
    obj: KubeObject,
    schema: SchemaNode,
    opts: { fieldValidation: FieldValidation },
  ): { causes: StatusCause[]; unknownFields: string[]; pruned: KubeObject };
  openApiV3Index(groupVersions: Array<string | { group: string; version: string }>, documents?: Record<string, unknown>): unknown;
  openApiV3Document(groupVersion: string, resources: unknown[]): unknown;
}

export interface SelectorsModule {
  parseLabelSelector(text: string): unknown;
  matchLabels(sel: unknown, labels: Record<string, string> | undefined): boolean;
  parseFieldSelector(text: string, resource: string, opts?: { namespaced?: boolean; selectableFields?: string[] }): unknown;
  matchFields(sel: unknown, obj: KubeObject): boolean;
}

export interface TableModule {
  toTable(
    resource: unknown,
    items: object[],
    opts: { includeObject?: 'None' | 'Metadata' | 'Object'; resourceVersion: string; continue?: string },
  ): unknown;
}

export interface NamesModule {
  validateObjectName(resource: string, name: string): string[];
}

export interface FaultDecision {
  delayMs: number;
  failStatus?: 429 | 500;
  dropWatchAfterMs?: number;
}
export interface FaultsModule {
  createFaultInjector(cfg?: unknown): { decide(verb: string, resource: string): FaultDecision };
}

export interface GcModule {
  startGarbageCollector(api: unknown): { stop(): void };
}

import { peerFallbacks } from './peer-fallbacks.ts';

// TEMP until the peer modules land: load each one if present, else a thin fallback.
async function load<T>(rel: string, fallback: T): Promise<T> {
  try {
    return (await import(new URL(rel, import.meta.url).href)) as T;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(rel.replace('../', ''))) {
      return fallback;
    }
    throw err;
  }
}

export const patchModule = await load<PatchModule>('../patch/index.ts', peerFallbacks.patch);
export const schemaModule = await load<SchemaModule>('../schema/index.ts', peerFallbacks.schema);
export const selectorsModule = await load<SelectorsModule>('../selectors.ts', peerFallbacks.selectors);
export const tableModule = await load<TableModule>('../table.ts', peerFallbacks.table);
export const namesModule = await load<NamesModule>('../validation/names.ts', peerFallbacks.names);
export const faultsModule = await load<FaultsModule>('../faults.ts', peerFallbacks.faults);
export const gcModule = await load<GcModule>('../gc.ts', peerFallbacks.gc);
