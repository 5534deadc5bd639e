/**
 * JSON given to the CLI in a file or a flag: untrusted, so bounded in size and depth, and every refusal is a
 * usage error (exit 2) naming the flag.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson } from '../shared/bounded-json.ts';
import { UsageError } from './command.ts';

/** Reads at most `max` bytes; null when the file holds more (or never ends, like /dev/zero). */
export function readAtMost(file: string, max: number): Buffer | null {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(max + 1);
    let size = 0;
    while (size <= max) {
      const n = readSync(fd, buf, size, max + 1 - size, null);
      if (n === 0) return buf.subarray(0, size);
      size += n;
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and parses a JSON file, bounded in size and depth; a missing, endless, too large or too deep file
 * or bad JSON is a usage error naming the flag and the file (exit 2). `parse` replaces the default bounded
 * JSON.parse (it throws JsonLimitError likewise).
 */
export function readJsonFile(
  flag: string,
  file: unknown,
  maxBytes: number,
  what: string,
  parse: (text: string) => unknown = (text) => parseBoundedJson(text, { maxDepth: MAX_JSON_DEPTH }),
): unknown {
  if (typeof file !== 'string' || file === '') throw new UsageError(`--${flag} FILE is required`);
  let bytes: Buffer | null;
  try {
    bytes = readAtMost(file, maxBytes);
  } catch (err) {
    throw new UsageError(
      `--${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (bytes === null) {
    throw new UsageError(`--${flag}: ${file} is over ${maxBytes} bytes (the limit for ${what}), or never ends`);
  }
  try {
    return parse(bytes.toString('utf8'));
  } catch (err) {
    // "is nested deeper than 64 levels (the limit is 64)" or "is not valid JSON (<parser's reason>)"
    throw new UsageError(
      `--${flag}: ${file} is ${err instanceof JsonLimitError ? err.message : `not valid JSON (${(err as Error).message})`}`,
    );
  }
}

/** JSON given inline as a flag's value, bounded like a file. */
export function parseJsonFlag(flag: string, text: string, maxBytes: number): unknown {
  try {
    return parseBoundedJson(text, { maxDepth: MAX_JSON_DEPTH, maxBytes });
  } catch (err) {
    throw new UsageError(
      `--${flag}: ${err instanceof JsonLimitError ? err.message : `not valid JSON (${(err as Error).message})`}`,
    );
  }
}
