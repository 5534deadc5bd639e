/**
 * Dead letters a function records itself, for input that can never succeed (core/outcome.ts). They go to
 * the function's own dead-letter queue — the one EventBridge and Lambda use after their retries — so one
 * queue, one alarm and one replay procedure cover every event given up on. The handler then returns
 * normally: Lambda has no "do not retry" error for asynchronous invocations, and a throw would be retried.
 */

import { sanitizeErrorMessage } from '../../adapters/state-table/index.ts';
import type { TerminalReason } from '../../core/outcome.ts';
import { JsonLimitError, MAX_JSON_DEPTH, stringifyBounded } from '../../shared/bounded-json.ts';

export interface TerminalDeadLetter {
  /** The function that gave up (`reconcile`, `audit`, ...). */
  functionName: string;
  reason: TerminalReason;
  /** The event (or direct input) exactly as the function received it. */
  event: unknown;
  /** Invocations made for this event, this one included: 1, since the function gave up at once. */
  attempts: number;
  requestId?: string;
}

export interface DeadLetterSink {
  send(letter: TerminalDeadLetter): Promise<void>;
}

/** SQS takes 256 KiB per message (body and attributes); the body is bounded below that. */
export const MAX_DEAD_LETTER_BODY_BYTES = 200 * 1024;

/** Message attribute names; ERROR_CODE and ERROR_MESSAGE are those EventBridge sets on its dead letters. */
export const DEAD_LETTER_ATTRIBUTES = {
  errorCode: 'ERROR_CODE',
  errorMessage: 'ERROR_MESSAGE',
  /** `{kind, field?, message}` as JSON: what triage and alarms read. */
  terminalReason: 'TERMINAL_REASON',
  functionName: 'FUNCTION_NAME',
  attempts: 'ATTEMPTS',
  requestId: 'REQUEST_ID',
} as const;

export const TERMINAL_ERROR_CODE = 'TerminalError';

export interface DeadLetterMessage {
  body: string;
  attributes: Record<string, { DataType: 'String' | 'Number'; StringValue: string }>;
}

/**
 * The queue message for a dead letter: the body is the event itself (so a dead letter is replayed the same
 * way whoever wrote it: put its body back on the bus); the reason travels in attributes. An event too deep
 * or too large to keep whole is kept as its envelope's scalar fields.
 */
export function deadLetterMessage(letter: TerminalDeadLetter): DeadLetterMessage {
  let body: string;
  try {
    body = stringifyBounded(letter.event ?? null, {
      maxDepth: MAX_JSON_DEPTH + 1,
      maxBytes: MAX_DEAD_LETTER_BODY_BYTES,
    });
  } catch (err) {
    const why = err instanceof JsonLimitError ? err.message : 'not serialisable';
    body = JSON.stringify({
      ...envelopeScalars(letter.event),
      eventOmitted: `the event was not kept whole: it is ${why}`,
    });
  }
  const reason: TerminalReason = {
    kind: letter.reason.kind,
    ...(letter.reason.field !== undefined ? { field: sanitizeErrorMessage(letter.reason.field, 200) } : {}),
    message: sanitizeErrorMessage(letter.reason.message, 1000),
  };
  const text = (value: string) => ({ DataType: 'String' as const, StringValue: value });
  return {
    body,
    attributes: {
      [DEAD_LETTER_ATTRIBUTES.errorCode]: text(TERMINAL_ERROR_CODE),
      [DEAD_LETTER_ATTRIBUTES.errorMessage]: text(reason.message),
      [DEAD_LETTER_ATTRIBUTES.terminalReason]: text(JSON.stringify(reason)),
      [DEAD_LETTER_ATTRIBUTES.functionName]: text(letter.functionName),
      [DEAD_LETTER_ATTRIBUTES.attempts]: { DataType: 'Number', StringValue: String(letter.attempts) },
      ...(letter.requestId ? { [DEAD_LETTER_ATTRIBUTES.requestId]: text(letter.requestId.slice(0, 200)) } : {}),
    },
  };
}

function envelopeScalars(event: unknown): Record<string, string> {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return {};
  const out: Record<string, string> = {};
  for (const key of ['version', 'id', 'detail-type', 'source', 'account', 'time', 'region']) {
    const value = (event as Record<string, unknown>)[key];
    if (typeof value === 'string') out[key] = value.slice(0, 1000);
  }
  return out;
}
