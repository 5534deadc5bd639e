import { fieldDiffs } from '../diff.ts';
import { objectKey, type KubeObject } from '../kube.ts';
import type { Finding, DesiredObjects } from './types.ts';
import { describeObject } from './text.ts';

/** Field managers that are pool-spirit itself: an edit by them is not drift. */
export const OWN_FIELD_MANAGERS = ['pool-spirit-reconciler', 'pool-spirit-agent'];
const MAX_PATHS = 4;

/**
 * Spec drift: an owned object that is missing, or whose fields differ from what the core renders for the
 * pool now (the same comparison the reconcile makes before it writes: fieldDiffs). Someone deleted or
 * edited it; a reconcile re-applies the rendered object. Paths are reported, never values (Secrets).
 */
export function driftFindings(cluster: string, pool: string, desired: DesiredObjects | undefined, liveByKey: ReadonlyMap<string, KubeObject>): Finding[] {
  if (!desired) return [];
  if ('error' in desired) {
    return [{ severity: 'warning', kind: 'render-failed', cluster, pool, fixable: false, reason: `could not render the desired objects to compare: ${desired.error}` }];
  }
  const findings: Finding[] = [];
  for (const obj of desired.objects) {
    const live = liveByKey.get(objectKey(obj));
    const object = describeObject(obj);
    if (!live) {
      findings.push({ severity: 'warning', kind: 'spec-drift', cluster, pool, object, fixable: true, reason: `${object} is missing (deleted?); a reconcile recreates it` });
      continue;
    }
    const paths = fieldDiffs(obj, live);
    if (paths.length === 0) continue;
    const shown = paths.slice(0, MAX_PATHS).join(', ') + (paths.length > MAX_PATHS ? ` and ${paths.length - MAX_PATHS} more` : '');
    const editors = editorsOf(live);
    findings.push({
      severity: 'warning',
      kind: 'spec-drift',
      cluster,
      pool,
      object,
      fixable: true,
      reason: `${object} differs from the rendered spec at ${shown}${editors.length ? ` (edited by ${editors.join(', ')})` : ''}; a reconcile re-applies it`,
    });
  }
  return findings;
}

/** Field managers other than pool-spirit that wrote the object (not its status), most recent first. */
export function editorsOf(obj: KubeObject): string[] {
  const entries = (obj.metadata.managedFields ?? []) as Array<{ manager?: string; time?: string; subresource?: string }>;
  return entries
    .filter((e) => e.manager && !OWN_FIELD_MANAGERS.includes(e.manager) && !e.subresource)
    .sort((a, b) => String(b.time ?? '').localeCompare(String(a.time ?? '')))
    .map((e) => e.manager!)
    .filter((m, i, all) => all.indexOf(m) === i);
}
