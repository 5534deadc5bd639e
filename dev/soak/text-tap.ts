/**
 * Everything the system writes that a secret must never appear in — the process's stdout and stderr (the
 * functions' logs), the fleet's log lines, every bus event and dead letter, table items — queued for the
 * secret scan and dropped once scanned, so a long soak holds only what arrived since the last scan.
 */
const MAX_QUEUED_CHARS = 64 * 1024 * 1024;

export class TextTap {
  #queue: { where: string; text: string }[] = [];
  #chars = 0;
  dropped = 0;
  scannedChars = 0;
  #restore: (() => void) | undefined;

  add(where: string, text: string): void {
    if (this.#chars + text.length > MAX_QUEUED_CHARS) {
      this.dropped++;
      return;
    }
    this.#queue.push({ where, text });
    this.#chars += text.length;
  }

  drain(): { where: string; text: string }[] {
    const out = this.#queue;
    this.#queue = [];
    this.scannedChars += this.#chars;
    this.#chars = 0;
    return out;
  }

  /**
   * Takes what the process writes to stdout and stderr (the functions' logs) into the tap; with
   * `passThrough` it is still written, otherwise only scanned (the soak's own lines bypass it).
   */
  captureProcessOutput(passThrough: boolean): void {
    const streams = [process.stdout, process.stderr] as const;
    const originals = streams.map((s) => s.write.bind(s));
    streams.forEach((stream, i) => {
      const name = i === 0 ? 'stdout' : 'stderr';
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        this.add(name, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        if (passThrough) return (originals[i] as (...a: unknown[]) => boolean)(chunk, ...rest);
        const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        done?.();
        return true;
      }) as typeof stream.write;
    });
    this.#restore = () => {
      streams.forEach((s, i) => {
        s.write = originals[i] as typeof s.write;
      });
    };
  }

  stopCapture(): void {
    this.#restore?.();
    this.#restore = undefined;
  }
}
