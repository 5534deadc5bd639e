import { describeOpenYurt } from '../nodepool-versions.ts';
import { lineChart } from './charts.ts';
import { escapeHtml as e } from './html-escape.ts';
import type { ClusterReport, FleetReport } from './report.ts';
import { bytes } from './text.ts';
import type { Finding, PoolHealthState, Severity } from './types.ts';

type Health = PoolHealthState | 'unknown';

/** Every state has a word and a symbol besides its colour, so the page reads without colour too. */
const HEALTH: Record<Health, { label: string; symbol: string }> = {
  healthy: { label: 'Healthy', symbol: '✔' },
  degraded: { label: 'Degraded', symbol: '▲' },
  critical: { label: 'Critical', symbol: '✖' },
  unknown: { label: 'Not audited', symbol: '?' },
};
const SEVERITY: Record<Severity, { label: string; symbol: string }> = {
  critical: { label: 'Critical', symbol: '✖' },
  warning: { label: 'Warning', symbol: '▲' },
  info: { label: 'Info', symbol: 'ℹ' },
};

const STYLE = `
:root{--ok:#1a7f37;--warn:#9a6700;--crit:#cf222e;--unk:#57606a;--bg:#fff;--fg:#1f2328;--muted:#57606a;--line:#d0d7de}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;padding:24px;max-width:1180px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:var(--muted)}.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 14px;min-width:150px}.card .n{font-size:24px;font-weight:600}
.badge{display:inline-block;border-radius:12px;padding:1px 9px;font-weight:600;font-size:12px;color:#fff;white-space:nowrap}
.healthy{background:var(--ok)}.degraded,.warning{background:var(--warn)}.critical{background:var(--crit)}.unknown,.info{background:var(--unk)}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
.tiles{display:flex;flex-wrap:wrap;gap:6px;margin:6px 0 12px;padding:0;list-style:none}
.tile{border-radius:6px;padding:4px 8px;font-size:12px;color:#fff;min-width:92px}.tile b{font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts svg{border:1px solid var(--line);border-radius:6px;background:#fff;max-width:100%}
.chart-title{font-weight:600;font-size:13px;fill:var(--fg)}.axis{font-size:10px;fill:var(--muted)}.legend text{font-size:11px;fill:var(--fg)}
.grid{stroke:#eaeef2}.axis-line{stroke:#8c959f}.reference{stroke:var(--crit);stroke-dasharray:5 4}.reference-label{font-size:10px;fill:var(--crit)}.chart-empty{fill:var(--muted)}
code{font-size:12px}.labels code{background:#f6f8fa;border-radius:4px;padding:0 4px;margin-right:4px}
`;

function badge(state: Health): string {
  const h = HEALTH[state];
  return `<span class="badge ${state}">${h.symbol} ${h.label}</span>`;
}

function severityBadge(s: Severity): string {
  return `<span class="badge ${s}">${SEVERITY[s].symbol} ${SEVERITY[s].label}</span>`;
}

function count(c: ClusterReport, state: PoolHealthState): number {
  return c.pools.filter((p) => p.health === state).length;
}

function findingRow(f: Finding, requested: boolean): string {
  const fix = f.fixable ? (requested ? 'reconcile requested' : 'fixable by a reconcile') : 'needs a person';
  return `<tr class="finding" data-kind="${e(f.kind)}" data-severity="${f.severity}"><td>${severityBadge(f.severity)}</td><td><code>${e(f.kind)}</code></td><td>${e(f.pool || '—')}</td><td class="reason">${e(f.reason)}</td><td>${fix}</td></tr>`;
}

function clusterSection(c: ClusterReport): string {
  const parts: string[] = [];
  parts.push(`<section class="cluster" id="cluster-${e(c.id)}" data-cluster="${e(c.id)}" data-health="${c.health}">`);
  parts.push(`<h2>${e(c.id)} ${badge(c.health)}</h2>`);
  const labels = Object.entries(c.labels)
    .map(([k, v]) => `<code>${e(k)}=${e(v)}</code>`)
    .join('');
  parts.push(
    `<p class="muted labels">${labels || 'no labels'} · ${c.auditedAt ? `audited ${e(c.auditedAt)}` : 'never audited'}${c.openYurt ? ` · OpenYurt ${e(describeOpenYurt(c.openYurt))}` : ''}</p>`,
  );
  if (c.error) parts.push(`<p><strong>Audit failed:</strong> ${e(c.error)}</p>`);
  if (c.pools.length) {
    parts.push(
      `<h3>Pools: ${count(c, 'healthy')} healthy, ${count(c, 'degraded')} degraded, ${count(c, 'critical')} critical</h3>`,
    );
    parts.push('<ul class="tiles">');
    for (const p of c.pools) {
      const h = HEALTH[p.health];
      const detail = `${p.pool}: ${h.label}${p.phase ? `, phase ${p.phase}` : ''}${p.findings ? `, ${p.findings} finding(s)` : ''}`;
      parts.push(
        `<li class="tile ${p.health}" data-pool="${e(p.pool)}" data-health="${p.health}" title="${e(detail)}">${h.symbol} <b>${e(p.pool)}</b> ${h.label}</li>`,
      );
    }
    parts.push('</ul>');
  }
  const requested = new Set(c.requested);
  if (c.findings.length) {
    parts.push(
      `<h3>Findings (${c.findings.length})</h3><table><thead><tr><th>Severity</th><th>Kind</th><th>Pool</th><th>Reason</th><th>Fix</th></tr></thead><tbody>`,
    );
    for (const f of c.findings) parts.push(findingRow(f, requested.has(f.pool)));
    parts.push('</tbody></table>');
  } else if (c.auditedAt) {
    parts.push('<p>No findings.</p>');
  }
  parts.push('<div class="charts">');
  parts.push(
    lineChart(c.history.leaderTransitions, {
      title: 'Leader transitions (cumulative)',
      format: (v) => String(Math.round(v)),
      unit: 1,
    }),
  );
  parts.push(
    lineChart(c.history.etcdBytes, {
      title: 'etcd memory (database size)',
      format: (v) => bytes(Math.round(v)),
      unit: 2 ** 20,
      reference: c.history.etcdQuotaBytes
        ? { value: c.history.etcdQuotaBytes, label: `quota ${bytes(c.history.etcdQuotaBytes)}` }
        : undefined,
    }),
  );
  parts.push('</div></section>');
  return parts.join('\n');
}

/** The fleet report as one self-contained HTML page: inline CSS and SVG, no scripts, no external assets. */
export function renderFleetReportHtml(report: FleetReport): string {
  const s = report.summary;
  const overview = report.clusters
    .map(
      (c) =>
        `<tr data-cluster="${e(c.id)}"><td><a href="#cluster-${e(c.id)}">${e(c.id)}</a></td><td>${badge(c.health)}</td><td>${count(c, 'healthy')}</td><td>${count(c, 'degraded')}</td><td>${count(c, 'critical')}</td><td>${c.findings.length}</td><td>${e(c.auditedAt ?? '—')}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Pool-spirit fleet report</title><style>${STYLE}</style></head>
<body>
<h1>Pool-spirit fleet report</h1>
<p class="muted">Generated ${e(report.generatedAt)}</p>
<div class="cards">
<div class="card"><div class="n" id="clusters-total">${s.clusters}</div>clusters (${s.clustersUnhealthy} unhealthy)</div>
<div class="card"><div class="n" id="pools-total">${s.pools}</div>pools audited</div>
<div class="card"><div class="n" id="pools-healthy">${s.healthyPools}</div>${HEALTH.healthy.symbol} healthy pools</div>
<div class="card"><div class="n" id="pools-unhealthy">${s.unhealthyPools}</div>unhealthy pools (${s.degradedPools} degraded, ${s.criticalPools} critical)</div>
<div class="card"><div class="n" id="findings-total">${s.findings.critical + s.findings.warning + s.findings.info}</div>findings: ${s.findings.critical} critical, ${s.findings.warning} warning, ${s.findings.info} info</div>
<div class="card"><div class="n" id="reconciles-requested">${s.reconcilesRequested}</div>reconciles requested</div>
</div>
<h2>Clusters</h2>
<table id="overview"><thead><tr><th>Cluster</th><th>Health</th><th>Healthy pools</th><th>Degraded</th><th>Critical</th><th>Findings</th><th>Audited</th></tr></thead><tbody>
${overview}
</tbody></table>
${report.clusters.map(clusterSection).join('\n')}
</body></html>
`;
}
