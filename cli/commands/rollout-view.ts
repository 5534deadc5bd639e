/** Human-readable rollout status: one line per cluster, one per pool that is not healthy at the target. */

import type { RolloutIndexEntry } from '../../adapters/state-table/rollout-state.ts';
import { concurrencyLimit, failureBudget } from '../../core/rollout/decide.ts';
import { formatDuration, formatLimit } from '../../core/rollout/limits.ts';
import type { RolloutState } from '../../core/rollout/types.ts';

const mark = (ok: boolean) => (ok ? 'ok' : '--');

export function renderRollout(state: RolloutState): string {
  const s = state.spec;
  const lines: string[] = [];
  const failed = state.clusters.filter((c) => c.failed).length;
  lines.push(
    `rollout ${state.id}  ${state.phase}  wave ${state.wave}  (state version ${state.version}, updated ${state.updatedAt})`,
  );
  if (state.reason) lines.push(`  ${state.reason}`);
  lines.push(
    `  change ${JSON.stringify(s.patch)}  selector ${
      Object.entries(s.selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || '(all clusters)'
    }`,
    `  max concurrency ${formatLimit(s.maxConcurrency)} (= ${concurrencyLimit(state)})  max failures ${formatLimit(s.maxFailures)} (= ${failureBudget(state)}, ${failed} so far)` +
      `  soak ${formatDuration(s.soakMs)}  progress deadline ${formatDuration(s.progressDeadlineMs)}  auto-rollback ${s.autoRollback ? 'on' : 'off'}`,
    '',
  );
  const width = Math.max(7, ...state.clusters.map((c) => c.id.length));
  lines.push(`  ${'CLUSTER'.padEnd(width)}  WAVE  ${'PHASE'.padEnd(11)}  POOLS OK  REASON`);
  for (const c of state.clusters) {
    const pools = Object.entries(c.pools);
    const wave = c.wave === undefined ? '-' : String(c.wave);
    const tag = c.canary ? ' (canary)' : '';
    lines.push(
      `  ${c.id.padEnd(width)}  ${wave.padStart(4)}  ${c.phase.padEnd(11)}  ${c.poolCount !== undefined ? `${c.healthyPools}/${c.poolCount}`.padStart(8) : '       -'}  ${(c.reason ?? '') + tag}`,
    );
    for (const [name, p] of pools) {
      lines.push(
        `      ${name}: applied ${mark(p.specApplied)} available ${mark(p.available)} version ${mark(p.atVersion)} leader ${mark(p.leaderHealthy)}${p.reason ? `  ${p.reason}` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export function renderRolloutList(entries: RolloutIndexEntry[]): string {
  if (entries.length === 0) return 'no rollouts\n';
  const width = Math.max(2, ...entries.map((e) => e.id.length));
  const lines = [`${'ID'.padEnd(width)}  ${'PHASE'.padEnd(11)}  CREATED                   CHANGE`];
  for (const e of entries)
    lines.push(`${e.id.padEnd(width)}  ${e.phase.padEnd(11)}  ${e.createdAt.padEnd(24)}  ${JSON.stringify(e.patch)}`);
  return `${lines.join('\n')}\n`;
}
