import { fieldDiffs } from '../diff.ts';
import { type KubeObject, objectKey } from '../kube.ts';
import { foreignEntries } from '../render/foreign-entries.ts';
import { describeObject } from './text.ts';
import type { DesiredObjects, Finding } from './types.ts';

/** Field managers that are pool-spirit itself: an edit by them is not drift. */
export const OWN_FIELD_MANAGERS = ['pool-spirit-reconciler', 'pool-spirit-agent'];
const MAX_PATHS = 4;

/**
 * Spec drift: an owned object that is missing, or whose fields differ from what the core renders for the
 * pool now (the same comparisons the reconcile makes before it writes: foreignEntries, then fieldDiffs).
 * Someone deleted or edited it; a reconcile removes the entries others added to lists pool-spirit alone
 * decides and re-applies the rendered fields. Paths are reported, never values (Secrets).
 */
export function driftFindings(
  cluster: string,
  pool: string,
  desired: DesiredObjects | undefined,
  liveByKey: ReadonlyMap<string, KubeObject>,
): Finding[] {
  if (!desired) return [];
  if ('error' in desired) {
    return [
      {
        severity: 'warning',
        kind: 'render-failed',
        cluster,
        pool,
        fixable: false,
        reason: `could not render the desired objects to compare: ${desired.error}`,
      },
    ];
  }
  const findings: Finding[] = [];
  for (const obj of desired.objects) {
    const live = liveByKey.get(objectKey(obj));
    const object = describeObject(obj);
    if (!live) {
      findings.push({
        severity: 'warning',
        kind: 'spec-drift',
        cluster,
        pool,
        object,
        fixable: true,
        reason: `${object} is missing (deleted?); a reconcile recreates it`,
      });
      continue;
    }
    const foreign = foreignEntries(obj, live).map((f) => f.path);
    const paths = fieldDiffs(obj, live);
    if (paths.length === 0 && foreign.length === 0) continue;
    const editors = editorsOf(live);
    const what = [
      ...(paths.length ? [`differs from the rendered spec at ${listed(paths)}`] : []),
      ...(foreign.length ? [`has entries pool-spirit did not render: ${listed(foreign)}`] : []),
    ].join(' and ');
    const fix = [
      ...(foreign.length ? ['removes those entries'] : []),
      ...(paths.length ? ['re-applies the rendered fields'] : []),
    ].join(' and ');
    findings.push({
      severity: 'warning',
      kind: 'spec-drift',
      cluster,
      pool,
      object,
      fixable: true,
      reason: `${object} ${what}${editors.length ? ` (edited by ${editors.join(', ')})` : ''}; a reconcile ${fix}`,
    });
  }
  return findings;
}

function listed(paths: string[]): string {
  return (
    paths.slice(0, MAX_PATHS).join(', ') + (paths.length > MAX_PATHS ? ` and ${paths.length - MAX_PATHS} more` : '')
  );
}

/** Field managers other than pool-spirit that wrote the object (not its status), most recent first. */
export function editorsOf(obj: KubeObject): string[] {
  const entries = (obj.metadata.managedFields ?? []) as Array<{
    manager?: string;
    time?: string;
    subresource?: string;
  }>;
  return entries
    .filter((e): e is typeof e & { manager: string } =>
      Boolean(e.manager && !OWN_FIELD_MANAGERS.includes(e.manager) && !e.subresource),
    )
    .sort((a, b) => String(b.time ?? '').localeCompare(String(a.time ?? '')))
    .map((e) => e.manager)
    .filter((m, i, all) => all.indexOf(m) === i);
}
