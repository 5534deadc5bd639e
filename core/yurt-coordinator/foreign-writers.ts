/**
 * Who else writes the keys the product renders into kube-system/yurt-coordinator-yurthub-certs, read from the
 * Secret's managedFields. OpenYurt v1.5's yurt-manager (its `yurtcoordinatorcert` controller, on by default)
 * rewrites `ca.crt` with its own CA at every start of every replica and issues a hub client pair of its own
 * (CN cluster-admin, O system:masters) unless its CA signed the one there: hubs that read the Secret then hold
 * a CA that does not verify any pool-spirit. The product takes its keys back on its next pass, and says who
 * wrote them, so that the operator turns that controller off (docs/openyurt.md).
 */
import type { KubeObject } from '../kube.ts';
import { CERTS_SECRET_KEYS } from './contract.ts';

/** The keys of the certs Secret the product renders (renderCertsSecret). */
export const RENDERED_CERTS_KEYS = [CERTS_SECRET_KEYS.ca, CERTS_SECRET_KEYS.clientCert, CERTS_SECRET_KEYS.clientKey];

export interface ForeignWrite {
  /** The field manager, e.g. `yurt-manager`. */
  manager: string;
  /** Update or Apply. */
  operation: string;
  /** When it last wrote, as the apiserver recorded it. */
  time?: string;
  /** Which of the product's keys it owns. */
  keys: string[];
}

interface ManagedFieldsEntry {
  manager?: unknown;
  operation?: unknown;
  time?: unknown;
  subresource?: unknown;
  fieldsV1?: unknown;
}

/** Entries of managers other than `own` that own any key the product renders. */
export function foreignCertsWrites(secret: Pick<KubeObject, 'metadata'>, own: string): ForeignWrite[] {
  const entries = (secret.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(entries)) return [];
  const writes: ForeignWrite[] = [];
  for (const entry of entries as ManagedFieldsEntry[]) {
    if (typeof entry?.manager !== 'string' || entry.manager === own || entry.subresource) continue;
    const data = (entry.fieldsV1 as Record<string, unknown> | undefined)?.['f:data'];
    if (typeof data !== 'object' || data === null) continue;
    const keys = RENDERED_CERTS_KEYS.filter((k) => `f:${k}` in data);
    if (keys.length === 0) continue;
    writes.push({
      manager: entry.manager,
      operation: typeof entry.operation === 'string' ? entry.operation : 'Update',
      ...(typeof entry.time === 'string' ? { time: entry.time } : {}),
      keys,
    });
  }
  return writes;
}

/** `yurt-manager (Update, 2026-12-06T03:00:00Z): ca.crt, …` for each, joined: for conditions and findings. */
export function describeForeignWrites(writes: readonly ForeignWrite[]): string {
  return writes
    .map((w) => `${w.manager} (${w.operation}${w.time ? `, ${w.time}` : ''}): ${w.keys.join(', ')}`)
    .join('; ');
}
