// TEMP until the peer modules land: minimal stand-ins so the server runs before they exist.
import fastJsonPatch from 'fast-json-patch';
import type { FaultsModule, GcModule, NamesModule, PatchModule, SchemaModule, SelectorsModule, TableModule, KubeObject } from './peers.ts';

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const patch: PatchModule = {
  applyMergePatch: (t, p) => mergePatch(t, p) as Record<string, unknown>,
  applyJsonPatch: (t, ops) => fastJsonPatch.applyPatch(structuredClone(t), ops as never, true, false).newDocument,
  applyStrategicMergePatch: (t, p) => mergePatch(t, p) as Record<string, unknown>,
  serverSideApply: (i) => mergePatch(i.live ?? {}, i.applied) as Record<string, unknown>,
  updateManagedFields: (i) => ((i.before?.metadata as KubeObject | undefined)?.managedFields ?? []) as never,
};

const schema: SchemaModule = {
  builtinSchema: () => undefined,
  crdVersionSchema: (crd, version) =>
    (crd.spec?.versions ?? []).find((v: KubeObject) => v.name === version)?.schema?.openAPIV3Schema,
  validateCrd: () => [],
  withCrdDefaults: (crd) => crd,
  strictDecodingError: (_kind, fields) => `strict decoding error: ${fields.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`,
  validateAgainstSchema: (obj) => ({ causes: [], unknownFields: [], pruned: obj }),
  openApiV3Index: () => ({ paths: {} }),
  openApiV3Document: () => ({ openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, components: { schemas: {} } }),
};

type Req = { key: string; op: string; values: string[] };
const selectors: SelectorsModule = {
  parseLabelSelector(text) {
    return text
      .split(',')
      .filter(Boolean)
      .map((part): Req => {
        const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(\S*)\s*$/.exec(part);
        if (m) return { key: m[1], op: m[2] === '!=' ? '!=' : '=', values: [m[3]] };
        if (part.trim().startsWith('!')) return { key: part.trim().slice(1), op: '!', values: [] };
        return { key: part.trim(), op: 'exists', values: [] };
      });
  },
  matchLabels(sel, labels = {}) {
    return (sel as Req[]).every((r) =>
      r.op === '=' ? labels[r.key] === r.values[0] : r.op === '!=' ? labels[r.key] !== r.values[0] : r.op === '!' ? !(r.key in labels) : r.key in labels,
    );
  },
  parseFieldSelector(text) {
    return selectors.parseLabelSelector(text);
  },
  matchFields(sel, obj) {
    const fields: Record<string, string> = { 'metadata.name': obj.metadata?.name, 'metadata.namespace': obj.metadata?.namespace };
    return (sel as Req[]).every((r) => (r.op === '!=' ? fields[r.key] !== r.values[0] : fields[r.key] === r.values[0]));
  },
};

const table: TableModule = {
  toTable(_res, items, opts) {
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: opts.resourceVersion, continue: opts.continue },
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name', description: 'Name', priority: 0 },
        { name: 'Created At', type: 'date', format: '', description: 'Creation timestamp', priority: 0 },
      ],
      rows: items.map((o) => {
        const obj = o as KubeObject;
        return {
          cells: [obj.metadata?.name, obj.metadata?.creationTimestamp],
          object: opts.includeObject === 'None' ? undefined : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata },
        };
      }),
    };
  },
};

const names: NamesModule = {
  validateObjectName(_resource, name) {
    if (name.length > 253) return ['must be no more than 253 characters'];
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)) {
      return [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ];
    }
    return [];
  },
};

const faults: FaultsModule = { createFaultInjector: () => ({ decide: () => ({ delayMs: 0 }) }) };
const gc: GcModule = { startGarbageCollector: () => ({ stop() {} }) };

export const peerFallbacks = { patch, schema, selectors, table, names, faults, gc };
