import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson, stringifyBounded } from '../../../shared/bounded-json.ts';
import type { BusEvent, DeadLetter } from './types.ts';

/** The local stack keeps its dead letters here, one JSON object per line. */
export const DEFAULT_STATE_DIR = '.local';
export const DLQ_FILE_NAME = 'dlq.jsonl';

export function dlqFilePath(stateDir: string = DEFAULT_STATE_DIR): string {
  return join(stateDir, DLQ_FILE_NAME);
}

/** Dead letters are serialised with these bounds: the event's own depth bound plus the two levels around it. */
export const DLQ_LINE_LIMITS = { maxDepth: MAX_JSON_DEPTH + 2, maxBytes: 1024 * 1024 };

/**
 * The dead letter as it can be kept: whole when it serialises within DLQ_LINE_LIMITS, otherwise with the
 * event cut down to its envelope (scalars only) and `eventOmitted` saying why. Never throws.
 */
export function storableDeadLetter(deadLetter: DeadLetter): { deadLetter: DeadLetter; line: string } {
  try {
    return { deadLetter, line: stringifyBounded(deadLetter, DLQ_LINE_LIMITS) };
  } catch (err) {
    const reason = err instanceof JsonLimitError ? err.message : String(err);
    // Read field by field: a dead letter read back from a file may lack any of them.
    const e: Partial<BusEvent> = deadLetter.event ?? {};
    const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 1000) : '');
    const event = {
      version: str(e.version),
      id: str(e.id),
      'detail-type': str(e['detail-type']),
      source: str(e.source),
      account: str(e.account),
      time: str(e.time),
      region: str(e.region),
      resources: Array.isArray(e.resources)
        ? e.resources
            .filter((r: unknown) => typeof r === 'string')
            .slice(0, 100)
            .map(str)
        : [],
      detail: {},
    };
    const kept: DeadLetter = {
      eventId: str(deadLetter.eventId),
      rule: str(deadLetter.rule),
      eventBus: str(deadLetter.eventBus),
      target: str(deadLetter.target),
      deadLetterQueueArn: deadLetter.deadLetterQueueArn === null ? null : str(deadLetter.deadLetterQueueArn),
      reason: deadLetter.reason,
      ...(deadLetter.terminal
        ? {
            terminal: {
              kind: deadLetter.terminal.kind,
              ...(deadLetter.terminal.field !== undefined ? { field: str(deadLetter.terminal.field) } : {}),
              message: str(deadLetter.terminal.message),
            },
          }
        : {}),
      error: str(deadLetter.error),
      attempts: typeof deadLetter.attempts === 'number' ? deadLetter.attempts : 0,
      firstAttemptAt: str(deadLetter.firstAttemptAt),
      failedAt: str(deadLetter.failedAt),
      event,
      eventOmitted: `the event was not kept whole: it is ${reason}`,
    };
    return { deadLetter: kept, line: JSON.stringify(kept) };
  }
}

/** Appends one dead letter (bounded, see storableDeadLetter) and returns what was written. */
export function appendDeadLetter(file: string, deadLetter: DeadLetter): DeadLetter {
  const stored = storableDeadLetter(deadLetter);
  mkdirSync(dirname(file), { recursive: true });
  // One write per line: a crash leaves at most one partial line, which readDeadLetters reports and skips.
  appendFileSync(file, `${stored.line}\n`, { mode: 0o600 });
  return stored.deadLetter;
}

export interface DeadLetterFile {
  deadLetters: DeadLetter[];
  /** Lines that are not valid JSON, by 1-based line number. */
  badLines: number[];
}

export function readDeadLetters(file: string): DeadLetterFile {
  if (!existsSync(file)) return { deadLetters: [], badLines: [] };
  const result: DeadLetterFile = { deadLetters: [], badLines: [] };
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      try {
        // Bounded like the writer, so a line from an older or foreign writer cannot overflow `events dlq --json`.
        result.deadLetters.push(parseBoundedJson(line, DLQ_LINE_LIMITS) as DeadLetter);
      } catch {
        result.badLines.push(i + 1);
      }
    });
  return result;
}
