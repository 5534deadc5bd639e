import type { KubeObject } from '../kube.ts';

/** `Kind namespace/name` (or `Kind name` for cluster-scoped objects). */
export function describeObject(obj: Pick<KubeObject, 'kind' | 'metadata'>): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}

/** A duration for people: 45s, 12m, 3h 5m, 2d 4h. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return 'unknown';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** Bytes in binary units: 512Mi, 1.5Gi. */
export function bytes(n: number): string {
  const units = ['B', 'Ki', 'Mi', 'Gi', 'Ti'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)}${units[i]}`;
}
