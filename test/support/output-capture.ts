/**
 * Records everything the process writes while it runs: process.stdout/stderr writes (Powertools loggers
 * write there) and console calls (vitest routes a test worker's console elsewhere, so they are wrapped too).
 * The output still goes where it went before; `stop()` restores the originals.
 */
import { format } from 'node:util';

export interface OutputCapture {
  /** Captured writes (a log line, or a multi-line console message), each with its origin (`stdout`, `console.error`, …). */
  readonly writes: { stream: string; text: string }[];
  stop(): void;
}

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export function captureOutput(options: { passThrough?: boolean } = {}): OutputCapture {
  const passThrough = options.passThrough ?? false;
  const writes: { stream: string; text: string }[] = [];
  const record = (stream: string, chunk: unknown) => {
    const text =
      typeof chunk === 'string'
        ? chunk
        : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array
          ? Buffer.from(chunk).toString('utf8')
          : String(chunk);
    if (text.length) writes.push({ stream, text });
  };
  const restore: (() => void)[] = [];
  for (const [name, stream] of [
    ['stdout', process.stdout],
    ['stderr', process.stderr],
  ] as const) {
    const original = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
      record(name, chunk);
      if (passThrough) return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    } as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
  for (const method of CONSOLE_METHODS) {
    const original = console[method];
    console[method] = (...args: unknown[]) => {
      record(`console.${method}`, format(...args));
      if (passThrough) original.apply(console, args);
    };
    restore.push(() => {
      console[method] = original;
    });
  }
  return {
    writes,
    stop() {
      for (const r of restore.reverse()) r();
      restore.length = 0;
    },
  };
}
