import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DeadLetter } from './types.ts';

/** The local stack keeps its dead letters here, one JSON object per line. */
export const DEFAULT_STATE_DIR = '.local';
export const DLQ_FILE_NAME = 'dlq.jsonl';

export function dlqFilePath(stateDir: string = DEFAULT_STATE_DIR): string {
  return join(stateDir, DLQ_FILE_NAME);
}

export function appendDeadLetter(file: string, deadLetter: DeadLetter): void {
  mkdirSync(dirname(file), { recursive: true });
  // One write per line: a crash leaves at most one partial line, which readDeadLetters reports and skips.
  appendFileSync(file, JSON.stringify(deadLetter) + '\n', { mode: 0o600 });
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
        result.deadLetters.push(JSON.parse(line) as DeadLetter);
      } catch {
        result.badLines.push(i + 1);
      }
    });
  return result;
}
