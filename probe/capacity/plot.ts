/**
 * The patch storm over time as an SVG picture (`spiritctl probe capacity --plot FILE`): memory series against
 * the limits the kernel enforces, etcd's db size, and the write p99 of each sample's window on a second axis.
 * Pure: the report in, the SVG text out. People look at a memory curve; the JSON holds every sample.
 */
import type { StormSample } from './storm.ts';

const MiB = 2 ** 20;
const W = 960;
const H = 460;
const PAD = { left: 64, right: 72, top: 36, bottom: 88 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#8c564b', '#ff7f0e', '#17becf'];

interface Series {
  name: string;
  points: Array<[number, number]>;
  dashed?: boolean;
  /** Right axis (ms) instead of the left (MiB). */
  right?: boolean;
}

/** The series a storm's samples hold: the pod's cgroups when it ran under a kubelet, else the processes'. */
export function stormSeries(samples: readonly StormSample[]): { series: Series[]; limits: Array<[string, number]> } {
  const pick = (name: string, f: (s: StormSample) => number | null | undefined, right = false): Series => ({
    name,
    right,
    points: samples.flatMap((s) => {
      const v = f(s);
      return typeof v === 'number' ? [[s.t, right ? v : v / MiB] as [number, number]] : [];
    }),
  });
  const pod = samples.some((s) => s.pod);
  const series = pod
    ? [
        pick('pod working set', (s) => s.pod?.workingSetBytes),
        pick('etcd container', (s) => s.pod?.containers.etcd?.workingSetBytes),
        pick('kube-apiserver container', (s) => s.pod?.containers['kube-apiserver']?.workingSetBytes),
        pick('agent container', (s) => s.pod?.containers.agent?.workingSetBytes),
        pick('etcd db size', (s) => s.dbSizeBytes),
      ]
    : [
        pick('etcd RSS + tmpfs', (s) => s.memoryBytes),
        pick('kube-apiserver RSS', (s) => s.apiRssBytes),
        pick('etcd db size', (s) => s.dbSizeBytes),
      ];
  series.push({ ...pick('write p99 (ms, right axis)', (s) => s.windowP99Ms, true), dashed: true });
  const last = samples.at(-1)?.pod;
  const limits: Array<[string, number]> = [];
  if (last?.limitBytes) limits.push(['pod limit', last.limitBytes / MiB]);
  const etcdLimit = last?.containers.etcd?.limitBytes;
  if (etcdLimit) limits.push(['etcd limit', etcdLimit / MiB]);
  return { series: series.filter((s) => s.points.length), limits };
}

export function stormSvg(title: string, samples: readonly StormSample[]): string {
  const { series, limits } = stormSeries(samples);
  const left = series.filter((s) => !s.right);
  const right = series.filter((s) => s.right);
  const tMax = Math.max(1, ...series.flatMap((s) => s.points.map(([t]) => t)));
  const yMax = niceCeiling(
    Math.max(1, ...left.flatMap((s) => s.points.map(([, v]) => v)), ...limits.map(([, v]) => v)),
  );
  const rMax = niceCeiling(Math.max(1, ...right.flatMap((s) => s.points.map(([, v]) => v))));
  const x = (t: number) => PAD.left + (t / tMax) * (W - PAD.left - PAD.right);
  const y = (v: number, max: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5;
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v, yMax)}" y2="${y(v, yMax)}" stroke="#eee"/>`,
      `<text x="${PAD.left - 6}" y="${y(v, yMax) + 4}" text-anchor="end">${round(v)}</text>`,
    );
    if (right.length) out.push(`<text x="${W - PAD.right + 6}" y="${y(v, yMax) + 4}">${round((rMax * i) / 5)}</text>`);
    const t = (tMax * i) / 5;
    out.push(`<text x="${x(t)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${round(t)}</text>`);
  }
  out.push(
    `<text x="${W / 2}" y="${H - PAD.bottom + 32}" text-anchor="middle">seconds into the patch storm</text>`,
    `<text x="16" y="${H / 2}" transform="rotate(-90 16 ${H / 2})" text-anchor="middle">MiB</text>`,
  );
  if (right.length)
    out.push(
      `<text x="${W - 16}" y="${H / 2}" transform="rotate(90 ${W - 16} ${H / 2})" text-anchor="middle">ms</text>`,
    );
  for (const [name, v] of limits)
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v, yMax)}" y2="${y(v, yMax)}" stroke="#000" stroke-dasharray="2 4"/>`,
      `<text x="${W - PAD.right - 4}" y="${y(v, yMax) - 4}" text-anchor="end">${escapeXml(name)} ${round(v)} MiB</text>`,
    );
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const max = s.right ? rMax : yMax;
    const d = s.points.map(([t, v], k) => `${k ? 'L' : 'M'}${x(t).toFixed(1)},${y(v, max).toFixed(1)}`).join(' ');
    out.push(
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`,
      `<text x="${PAD.left + 8 + (i % 3) * 280}" y="${H - 30 + Math.floor(i / 3) * 16}" fill="${colour}">${escapeXml(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceCeiling(v: number): number {
  const step = 10 ** Math.floor(Math.log10(v));
  return Math.ceil(v / step) * step;
}

function round(v: number): string {
  return v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10);
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
