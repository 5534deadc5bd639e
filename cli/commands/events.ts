import { closeSync, openSync, readSync } from 'node:fs';
import type { Command } from '../command.ts';
import { UsageError } from '../command.ts';
import { DEFAULT_STATE_DIR, dlqFilePath, readDeadLetters } from '../../local/bus/dlq-store.ts';
import { compilePattern, InvalidPatternError, matches } from '../../local/bus/pattern.ts';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson } from '../../shared/bounded-json.ts';
import { MAX_ENTRIES_SIZE_BYTES } from '../../events/put-events-limits.ts';

/** A pattern or event file is read up to this many bytes: an event is at most 256 KB on EventBridge. */
export const MAX_JSON_FILE_BYTES = MAX_ENTRIES_SIZE_BYTES;

/** Reads at most `max` bytes; null when the file holds more (or never ends, like /dev/zero). */
function readAtMost(file: string, max: number): Buffer | null {
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
 * or bad JSON is a usage error naming the flag and the file (exit 2).
 */
function readJsonFile(flag: string, file: unknown): unknown {
  if (typeof file !== 'string' || file === '') throw new UsageError(`--${flag} FILE is required`);
  let bytes: Buffer | null;
  try {
    bytes = readAtMost(file, MAX_JSON_FILE_BYTES);
  } catch (err) {
    throw new UsageError(`--${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (bytes === null) {
    throw new UsageError(`--${flag}: ${file} is over ${MAX_JSON_FILE_BYTES} bytes (the limit for a pattern or event file), or never ends`);
  }
  try {
    return parseBoundedJson(bytes.toString('utf8'), { maxDepth: MAX_JSON_DEPTH });
  } catch (err) {
    // "is nested deeper than 64 levels (the limit is 64)" or "is not valid JSON (<parser's reason>)"
    throw new UsageError(`--${flag}: ${file} is ${err instanceof JsonLimitError ? err.message : `not valid JSON (${(err as Error).message})`}`);
  }
}

export const testPatternCommand: Command = {
  path: ['events', 'test-pattern'],
  summary: 'test an EventBridge event pattern against an event (like TestEventPattern)',
  options: {
    pattern: { type: 'string', valueName: 'FILE', description: 'JSON file holding the event pattern' },
    event: { type: 'string', valueName: 'FILE', description: 'JSON file holding the event' },
  },
  details: `
Prints "true" when the event matches the pattern and "false" when it does not (exit 0 either way).
An invalid pattern exits 2 with the reason, naming where in the pattern the problem is. Each file is read
up to 256 KB and may nest JSON up to ${MAX_JSON_DEPTH} levels; more is refused (exit 2).

Example:
  spiritctl events test-pattern --pattern rule.json --event notice.json`,
  async run({ values }) {
    const pattern = readJsonFile('pattern', values.pattern);
    const event = readJsonFile('event', values.event);
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      throw new UsageError(`--event: ${String(values.event)} must hold a JSON object`);
    }
    let compiled;
    try {
      compiled = compilePattern(pattern);
    } catch (err) {
      if (err instanceof InvalidPatternError) {
        process.stderr.write(`spiritctl events test-pattern: ${String(values.pattern)}: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    process.stdout.write(`${matches(compiled, event)}\n`);
    return 0;
  },
};

export const dlqCommand: Command = {
  path: ['events', 'dlq'],
  summary: 'list the dead letters the local event bus kept',
  options: {
    json: { type: 'boolean', description: 'print JSON ({ "deadLetters": [...], "count": N })' },
    'state-dir': { type: 'string', valueName: 'DIR', default: DEFAULT_STATE_DIR, description: 'state directory of the local stack' },
  },
  details: `
Events whose delivery gave up (retries exhausted or maximum event age exceeded) are kept with the rule,
the target, the attempt count and the last error, in <state-dir>/dlq.jsonl.`,
  async run({ values }) {
    const file = dlqFilePath(String(values['state-dir']));
    const { deadLetters, badLines } = readDeadLetters(file);
    if (badLines.length) process.stderr.write(`warning: ${file}: skipped unreadable line(s) ${badLines.join(', ')}\n`);
    if (values.json) {
      process.stdout.write(JSON.stringify({ deadLetters, count: deadLetters.length }, null, 2) + '\n');
      return 0;
    }
    if (deadLetters.length === 0) {
      process.stdout.write(`no dead letters (${file})\n`);
      return 0;
    }
    const rows = deadLetters.map((d) => [d.failedAt, d.rule, d.target, String(d.attempts), d.reason, d.event?.['detail-type'] ?? '', d.eventId, d.error]);
    const header = ['FAILED AT', 'RULE', 'TARGET', 'ATTEMPTS', 'REASON', 'DETAIL-TYPE', 'EVENT ID', 'ERROR'];
    const widths = header.map((h, i) => (i === header.length - 1 ? 0 : Math.max(h.length, ...rows.map((r) => r[i].length))));
    const line = (cells: string[]) => cells.map((c, i) => (widths[i] ? c.padEnd(widths[i]) : c.split('\n')[0])).join('  ').trimEnd();
    process.stdout.write([line(header), ...rows.map(line)].join('\n') + `\n${deadLetters.length} dead letter(s) in ${file}\n`);
    return 0;
  },
};

export const eventsCommands: Command[] = [testPatternCommand, dlqCommand];
