import { escapeHtml } from './html-escape.ts';
import type { ChartSeries } from './report.ts';

/** Colour-blind-safe palette (Okabe-Ito); every series also gets its own marker shape and dash. */
const COLOURS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9'] as const;
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '4 4', '1 2'] as const;
const MARKERS = ['circle', 'square', 'diamond', 'triangle', 'circle', 'square'] as const;

/** The i-th entry of a style list, starting over after its last. */
function cycle<T>(list: readonly [T, ...T[]], i: number): T {
  return list[i % list.length] ?? list[0];
}

export interface LineChartOptions {
  title: string;
  /** Formats a y value for the axis and tooltips. */
  format: (v: number) => string;
  /** Axis ticks are whole multiples of this (1 for counts, 1 MiB for bytes). */
  unit?: number;
  /** A horizontal reference line (e.g. the etcd quota). */
  reference?: { value: number; label: string };
  width?: number;
  height?: number;
}

/**
 * A line chart as inline SVG: time on x, value on y, one line per series with a legend naming the pool.
 * Each point carries a <title> so hovering shows the exact figure; the figure has a text summary for
 * screen readers.
 */
export function lineChart(series: ChartSeries[], opts: LineChartOptions): string {
  const width = opts.width ?? 520;
  const height = opts.height ?? 220;
  const pad = { left: 64, right: 12, top: 28, bottom: 40 };
  const points = series.flatMap((s) => s.points);
  const title = `<text x="${pad.left}" y="18" class="chart-title">${escapeHtml(opts.title)}</text>`;
  if (points.length === 0) {
    return `<svg role="img" aria-label="${escapeHtml(opts.title)}: no history yet" viewBox="0 0 ${width} 80" width="${width}" height="80" xmlns="http://www.w3.org/2000/svg">${title}<text x="${pad.left}" y="52" class="chart-empty">no history yet</text></svg>`;
  }
  const times = points.map((p) => Date.parse(p.at));
  let [t0, t1] = [Math.min(...times), Math.max(...times)];
  if (t0 === t1) [t0, t1] = [t0 - 60_000, t1 + 60_000];
  const values = points.map((p) => p.value).concat(opts.reference ? [opts.reference.value] : []);
  const unit = opts.unit ?? 1;
  const step = niceStep((Math.max(unit, ...values) * 1.05) / 4 / unit) * unit;
  const ticks = Math.max(1, Math.ceil((Math.max(unit, ...values) * 1.05) / step));
  const vMax = step * ticks;
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const x = (t: number) => pad.left + ((t - t0) / (t1 - t0)) * plotW;
  const y = (v: number) => pad.top + plotH - (v / vMax) * plotH;
  const parts: string[] = [title];

  for (let i = 0; i <= ticks; i++) {
    const v = step * i;
    parts.push(
      `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="grid"/>`,
    );
    parts.push(
      `<text x="${pad.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="axis">${escapeHtml(opts.format(v))}</text>`,
    );
  }
  for (const [t, anchor] of [
    [t0, 'start'],
    [t1, 'end'],
  ] as const) {
    parts.push(
      `<text x="${x(t).toFixed(1)}" y="${height - pad.bottom + 16}" text-anchor="${anchor}" class="axis">${escapeHtml(shortTime(t))}</text>`,
    );
  }
  parts.push(`<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${pad.top + plotH}" class="axis-line"/>`);
  parts.push(
    `<line x1="${pad.left}" x2="${width - pad.right}" y1="${pad.top + plotH}" y2="${pad.top + plotH}" class="axis-line"/>`,
  );
  if (opts.reference) {
    const ry = y(opts.reference.value).toFixed(1);
    parts.push(`<line x1="${pad.left}" x2="${width - pad.right}" y1="${ry}" y2="${ry}" class="reference"/>`);
    parts.push(
      `<text x="${width - pad.right}" y="${(Number(ry) - 4).toFixed(1)}" text-anchor="end" class="reference-label">${escapeHtml(opts.reference.label)}</text>`,
    );
  }
  series.forEach((s, i) => {
    const colour = cycle(COLOURS, i);
    const coords = s.points.map((p) => [x(Date.parse(p.at)), y(p.value)] as const);
    if (coords.length > 1) {
      const dash = cycle(DASHES, i);
      parts.push(
        `<polyline fill="none" stroke="${colour}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${coords.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ')}"/>`,
      );
    }
    s.points.forEach((p, j) => {
      const [cx, cy] = coords[j] ?? [x(Date.parse(p.at)), y(p.value)];
      parts.push(
        `<g>${marker(cycle(MARKERS, i), cx, cy, colour)}<title>${escapeHtml(`${s.pool} at ${p.at}: ${opts.format(p.value)}`)}</title></g>`,
      );
    });
  });
  const legendY = height - 10;
  let legendX = pad.left;
  series.forEach((s, i) => {
    const colour = cycle(COLOURS, i);
    parts.push(
      `<g class="legend">${marker(cycle(MARKERS, i), legendX + 4, legendY - 4, colour)}<text x="${legendX + 12}" y="${legendY}">${escapeHtml(s.pool)}</text></g>`,
    );
    legendX += 16 + Math.min(s.pool.length, 24) * 6.5 + 12;
  });
  const summary = series
    .map((s) => {
      const last = s.points.at(-1);
      if (!last) throw new Error(`chart "${opts.title}": the series of pool ${s.pool} has no points`);
      return `${s.pool}: ${opts.format(last.value)}`;
    })
    .join('; ');
  return `<svg role="img" aria-label="${escapeHtml(`${opts.title}. Latest: ${summary}`)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}

function marker(shape: (typeof MARKERS)[number], cx: number, cy: number, colour: string): string {
  const [a, b] = [cx.toFixed(1), cy.toFixed(1)];
  switch (shape) {
    case 'square':
      return `<rect x="${(cx - 3.5).toFixed(1)}" y="${(cy - 3.5).toFixed(1)}" width="7" height="7" fill="${colour}"/>`;
    case 'diamond':
      return `<polygon points="${a},${(cy - 4.5).toFixed(1)} ${(cx + 4.5).toFixed(1)},${b} ${a},${(cy + 4.5).toFixed(1)} ${(cx - 4.5).toFixed(1)},${b}" fill="${colour}"/>`;
    case 'triangle':
      return `<polygon points="${a},${(cy - 4.5).toFixed(1)} ${(cx + 4.5).toFixed(1)},${(cy + 3.5).toFixed(1)} ${(cx - 4.5).toFixed(1)},${(cy + 3.5).toFixed(1)}" fill="${colour}"/>`;
    default:
      return `<circle cx="${a}" cy="${b}" r="3.5" fill="${colour}"/>`;
  }
}

/** The smallest of 1, 2, 5 × 10^k (k ≥ 0) at or above `raw`: axis steps people read at a glance. */
function niceStep(raw: number): number {
  if (raw <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function shortTime(t: number): string {
  return `${new Date(t).toISOString().slice(5, 16).replace('T', ' ')} UTC`;
}
