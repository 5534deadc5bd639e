import { DEFAULT_STATE_DIR, dlqFilePath, readDeadLetters } from '../../dev/local/bus/dlq-store.ts';
import {
  type CompiledPattern,
  compilePattern,
  InvalidPatternError,
  JsonNumber,
  matches,
  parseJsonKeepingNumbers,
} from '../../dev/local/bus/pattern.ts';
import { MAX_ENTRIES_SIZE_BYTES } from '../../events/put-events-limits.ts';
import { MAX_JSON_DEPTH } from '../../shared/bounded-json.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../command.ts';
import { readJsonFile } from '../json-input.ts';

/** A pattern or event file is read up to this many bytes: an event is at most 256 KB on EventBridge. */
export const MAX_JSON_FILE_BYTES = MAX_ENTRIES_SIZE_BYTES;
// Numbers keep their text: EventBridge compares numbers that are not exactly a double by it.
const readPatternOrEvent = (flag: string, file: unknown) =>
  readJsonFile(flag, file, MAX_JSON_FILE_BYTES, 'a pattern or event file', parseJsonKeepingNumbers);

export const testPatternCommand: Command = {
  path: ['events', 'test-pattern'],
  summary: 'test an EventBridge event pattern against an event (like TestEventPattern)',
  options: {
    pattern: { type: 'string', valueName: 'FILE', description: 'JSON file holding the event pattern' },
    event: { type: 'string', valueName: 'FILE', description: 'JSON file holding the event' },
  },
  details: `
Prints "true" when the event matches the pattern and "false" when it does not (exit 0 either way).
An invalid pattern exits 2 with the reason, naming where in the pattern the problem is. The matcher is
the local bus's, held to the answers of AWS's event-ruler (EventBridge's pattern library) by the tests. Each file is read
up to 256 KB and may nest JSON up to ${MAX_JSON_DEPTH} levels; more is refused (exit 2).

Example:
  spiritctl events test-pattern --pattern rule.json --event notice.json`,
  async run({ values }) {
    const pattern = readPatternOrEvent('pattern', values.pattern);
    const event = readPatternOrEvent('event', values.event);
    if (typeof event !== 'object' || event === null || Array.isArray(event) || event instanceof JsonNumber) {
      throw new UsageError(`--event: ${String(values.event)} must hold a JSON object`);
    }
    let compiled: CompiledPattern;
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
    'state-dir': {
      type: 'string',
      valueName: 'DIR',
      description: `state directory of the local stack (env SPIRITCTL_STATE_DIR, which <state-dir>/env exports, else ${DEFAULT_STATE_DIR})`,
    },
  },
  details: `
Events whose delivery gave up (retries exhausted or maximum event age exceeded) are kept with the rule,
the target, the attempt count and the last error, in <state-dir>/dlq.jsonl. After \`source <state-dir>/env\`
(written by \`spiritctl local up\`) that is the running stack's state directory.`,
  async run({ values }) {
    const stateDir =
      (values['state-dir'] as string | undefined) ?? (process.env.SPIRITCTL_STATE_DIR || DEFAULT_STATE_DIR);
    const file = dlqFilePath(stateDir);
    const { deadLetters, badLines } = readDeadLetters(file);
    if (badLines.length) process.stderr.write(`warning: ${file}: skipped unreadable line(s) ${badLines.join(', ')}\n`);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ deadLetters, count: deadLetters.length }, null, 2)}\n`);
      return 0;
    }
    if (deadLetters.length === 0) {
      process.stdout.write(`no dead letters (${file})\n`);
      return 0;
    }
    const rows = deadLetters.map((d) => [
      d.failedAt,
      d.rule,
      d.target,
      String(d.attempts),
      d.reason,
      d.event?.['detail-type'] ?? '',
      d.eventId,
      d.error,
    ]);
    const header = ['FAILED AT', 'RULE', 'TARGET', 'ATTEMPTS', 'REASON', 'DETAIL-TYPE', 'EVENT ID', 'ERROR'];
    const widths = header.map((h, i) =>
      i === header.length - 1 ? 0 : Math.max(h.length, ...rows.map((r) => r[i].length)),
    );
    const line = (cells: string[]) =>
      cells
        .map((c, i) => (widths[i] ? c.padEnd(widths[i]) : c.split('\n')[0]))
        .join('  ')
        .trimEnd();
    process.stdout.write(
      `${[line(header), ...rows.map(line)].join('\n')}\n${deadLetters.length} dead letter(s) in ${file}\n`,
    );
    return 0;
  },
};

export const eventsCommands: Command[] = [testPatternCommand, dlqCommand];
