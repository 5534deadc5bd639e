/**
 * What may differ between two correct API servers is taken out before comparing: uids (numbered in order
 * of first appearance, so references still compare), resourceVersions, continue tokens, timestamps
 * (creation, managedFields, conditions), allocated ClusterIPs, listen addresses, `Age` cells of Tables, names generated from
 * `generateName`, and the order of list items (the API promises none across backends).
 */
import { redactObject } from '../../../dev/local/kube-proxy/index.ts';

const TIME_KEYS = new Set([
  'creationTimestamp',
  'deletionTimestamp',
  'time',
  'lastTransitionTime',
  'lastUpdateTime',
  'lastHeartbeatTime',
  'lastProbeTime',
  'startTime',
  'renewTime',
  'acquireTime',
  'eventTime',
  'firstTimestamp',
  'lastTimestamp',
]);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const AGE = /^(\d+[smhdy])+$/;
const IP = /^\d{1,3}(\.\d{1,3}){3}$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One per backend replay: uid numbering runs across the whole corpus. */
export class Normalizer {
  private readonly uids = new Map<string, string>();

  private uid = (u: string) => {
    if (!this.uids.has(u)) this.uids.set(u, `<uid:${this.uids.size + 1}>`);
    return this.uids.get(u)!;
  };

  normalize(value: unknown): unknown {
    // Secrets are compared redacted, so no Secret value can reach a report.
    return this.walk(redactObject(value), undefined);
  }

  private walk(v: unknown, key: string | undefined): unknown {
    if (Array.isArray(v)) {
      const items = v.map((x) => this.walk(x, undefined));
      return key === 'items' ? sortByName(items) : items;
    }
    if (isObject(v)) return this.object(v);
    if (typeof v !== 'string') return v;
    if (key === 'uid') return this.uid(v);
    if (key === 'resourceVersion') return v === '' ? v : '<rv>';
    if (key === 'continue') return v === '' ? v : '<continue>';
    if (key !== undefined && TIME_KEYS.has(key)) return '<time>';
    if ((key === 'clusterIP' || key === 'clusterIPs') && IP.test(v)) return '<clusterIP>';
    // Where each backend happens to listen.
    if (key === 'serverAddress') return '<address>';
    return v.replace(UUID, this.uid);
  }

  private object(o: Json): Json {
    const out: Json = {};
    for (const [rawKey, x] of Object.entries(o)) {
      // managedFields name list items by key: `k:{"uid":"…"}`.
      const k = rawKey.replace(UUID, this.uid);
      out[k] =
        k === 'clusterIPs' && Array.isArray(x)
          ? x.map((ip) => (typeof ip === 'string' && IP.test(ip) ? '<clusterIP>' : ip))
          : this.walk(x, rawKey);
    }
    const meta = out.metadata;
    if (
      isObject(meta) &&
      typeof meta.generateName === 'string' &&
      typeof meta.name === 'string' &&
      meta.name.startsWith(meta.generateName)
    ) {
      meta.name = `${meta.generateName}<generated>`;
    }
    if (out.kind === 'Table' && Array.isArray(out.columnDefinitions) && Array.isArray(out.rows)) {
      const ages = out.columnDefinitions.flatMap((c, i) => (isObject(c) && c.name === 'Age' ? [i] : []));
      out.rows = out.rows.map((r) =>
        isObject(r) && Array.isArray(r.cells)
          ? { ...r, cells: r.cells.map((cell, i) => (ages.includes(i) ? '<age>' : cell)) }
          : r,
      );
    } else if (out.kind === 'Table' && Array.isArray(out.rows)) {
      // A watch's later Table events carry no column definitions: an age is known by its form.
      out.rows = out.rows.map((r) =>
        isObject(r) && Array.isArray(r.cells)
          ? { ...r, cells: r.cells.map((cell) => (typeof cell === 'string' && AGE.test(cell) ? '<age>' : cell)) }
          : r,
      );
    }
    return out;
  }
}

function sortKey(v: unknown): string {
  const meta = isObject(v)
    ? isObject(v.metadata)
      ? v.metadata
      : isObject(v.object) && isObject(v.object.metadata)
        ? v.object.metadata
        : undefined
    : undefined;
  return meta ? `${String(meta.namespace ?? '')}/${String(meta.name ?? '')}` : '';
}

function sortByName(items: unknown[]): unknown[] {
  return [...items].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
}
