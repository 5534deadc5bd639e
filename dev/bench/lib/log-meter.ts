/**
 * Counts what the functions would write to CloudWatch Logs: every JSON line a Powertools logger or metrics
 * instance prints (stdout or stderr) is attributed to its function by its `service` field and swallowed,
 * and every EMF document's metric series (namespace, metric, dimension values) is collected — each distinct
 * series is a CloudWatch custom metric billed per month. Anything else printed passes through.
 */
import type { FunctionName } from '../../../core/cost/counts.ts';

export const SERVICE_TO_FUNCTION: Record<string, FunctionName> = {
  'pool-spirit-reconciler': 'reconcile',
  'pool-spirit-audit': 'audit',
  'pool-spirit-rollout': 'rollout',
  'pool-spirit-probe': 'probe',
  'pool-spirit-cloud-events': 'cloudEvents',
};

interface Emf {
  _aws?: { CloudWatchMetrics?: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
  [k: string]: unknown;
}

export class LogMeter {
  readonly bytes: Partial<Record<FunctionName, number>> = {};
  readonly lines: Partial<Record<FunctionName, number>> = {};
  /** Distinct metric series: `namespace|metric|dim=value,…`. */
  readonly series = new Set<string>();
  private restore: (() => void) | undefined;

  start(): void {
    const patch = (stream: NodeJS.WriteStream) => {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        const passed = this.take(text);
        if (passed === '') {
          const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
          cb?.();
          return true;
        }
        return original(passed, ...(rest as []));
      }) as typeof stream.write;
      return () => {
        stream.write = original as typeof stream.write;
      };
    };
    const undo = [patch(process.stdout), patch(process.stderr)];
    this.restore = () => {
      for (const u of undo) u();
    };
  }

  stop(): void {
    this.restore?.();
    this.restore = undefined;
  }

  totalBytes(): number {
    return Object.values(this.bytes).reduce((n: number, v) => n + (v ?? 0), 0);
  }

  /** Counts and drops the functions' lines; returns what is left to print. */
  private take(text: string): string {
    const kept: string[] = [];
    for (const line of text.split(/(?<=\n)/)) {
      const fn = this.functionOf(line);
      if (!fn) {
        kept.push(line);
        continue;
      }
      this.bytes[fn] = (this.bytes[fn] ?? 0) + Buffer.byteLength(line);
      this.lines[fn] = (this.lines[fn] ?? 0) + 1;
    }
    return kept.join('');
  }

  private functionOf(line: string): FunctionName | undefined {
    if (!line.startsWith('{')) return undefined;
    let doc: Emf;
    try {
      doc = JSON.parse(line) as Emf;
    } catch {
      return undefined;
    }
    const fn = SERVICE_TO_FUNCTION[String(doc.service ?? '')];
    if (!fn) return undefined;
    for (const m of doc._aws?.CloudWatchMetrics ?? []) {
      for (const dims of m.Dimensions) {
        const key = dims.map((d) => `${d}=${String(doc[d])}`).join(',');
        for (const metric of m.Metrics) this.series.add(`${m.Namespace}|${metric.Name}|${key}`);
      }
    }
    return fn;
  }
}
