/**
 * The rules' dead-letter queues as SQS `SendMessage` endpoints: a function that gives up on an input itself
 * (functions/common/dead-letters.ts) sends its dead letter to its queue, and locally that queue is the same
 * store the bus keeps its own dead letters in. Only what the functions send is taken: a message whose
 * `TERMINAL_REASON` attribute says why (functions/common/dead-letters.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import { TERMINAL_KINDS } from '../../../core/outcome.ts';
import { MAX_EVENT_BYTES, MAX_EVENT_DEPTH } from '../../../events/envelope.ts';
import { DEAD_LETTER_ATTRIBUTES as ATTR } from '../../../functions/common/dead-letters.ts';
import { parseBoundedJson } from '../../../shared/bounded-json.ts';
import type { ResolvedRule } from './delivery.ts';
import { matches } from './pattern.ts';
import { sanitizeError } from './sanitize.ts';
import type { BusEvent, DeadLetter, TerminalDeadLetterReason } from './types.ts';

export { SQS_SEND_MESSAGE_TARGET } from '../../../functions/common/sqs-dead-letters.ts';

const TERMINAL_KIND_SET: ReadonlySet<string> = new Set(TERMINAL_KINDS);

/** An SQS error as the JSON protocol returns it. */
export class SqsCallError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: string, message: string, status = 400) {
    super(message);
    this.name = 'SqsCallError';
    this.type = type;
    this.status = status;
  }
}

/** `<endpoint>/<account>/<queue name>`, the URL form SQS gives its queues. */
export function queueUrlFor(endpoint: string, queueArn: string): string {
  const [, , , , account, name] = queueArn.split(':');
  return `${endpoint}/${account}/${name}`;
}

const invalid = (message: string) => new SqsCallError('InvalidParameterValue', message);

/** A SendMessage request to one of the rules' queues, as the dead letter to keep. */
export function deadLetterFromSendMessage(
  request: Record<string, unknown>,
  rules: ResolvedRule[],
  now: number,
): { deadLetter: DeadLetter; response: Record<string, string> } {
  const { QueueUrl, MessageBody, MessageAttributes } = request;
  if (typeof QueueUrl !== 'string') throw invalid('QueueUrl is required');
  const name = QueueUrl.split('/').pop() ?? '';
  const queueRules = rules.filter((r) => r.deadLetterQueueArn?.split(':')[5] === name);
  if (!name || queueRules.length === 0)
    throw new SqsCallError(
      'AWS.SimpleQueueService.NonExistentQueue',
      `no rule has the dead-letter queue ${name || QueueUrl}`,
    );
  if (typeof MessageBody !== 'string' || MessageBody.length === 0) throw invalid('MessageBody is required');
  const attribute = (key: string): string | undefined => {
    const value = (MessageAttributes as Record<string, { StringValue?: unknown }> | undefined)?.[key]?.StringValue;
    return typeof value === 'string' ? value : undefined;
  };
  const terminal = terminalReasonOf(attribute(ATTR.terminalReason));
  let event: unknown;
  try {
    event = parseBoundedJson(MessageBody, { maxDepth: MAX_EVENT_DEPTH, maxBytes: MAX_EVENT_BYTES });
  } catch (err) {
    throw invalid(`MessageBody is not the event as JSON: ${sanitizeError(err)}`);
  }
  const busEvent = (
    typeof event === 'object' && event !== null && !Array.isArray(event) ? event : { detail: { input: event } }
  ) as BusEvent;
  const target = attribute(ATTR.functionName);
  const candidates = queueRules.filter((r) => target === undefined || r.target === target);
  const rule = candidates.find((r) => r.compiled && matches(r.compiled, busEvent)) ?? candidates[0] ?? queueRules[0];
  const at = new Date(now).toISOString();
  const attempts = Number(attribute(ATTR.attempts) ?? 1);
  const deadLetter: DeadLetter = {
    eventId: typeof busEvent.id === 'string' ? busEvent.id : '',
    rule: rule.name,
    eventBus: rule.eventBus,
    target: rule.target,
    deadLetterQueueArn: rule.deadLetterQueueArn,
    reason: 'terminal',
    terminal,
    error: sanitizeError(attribute(ATTR.errorMessage) ?? terminal.message),
    attempts: Number.isInteger(attempts) && attempts > 0 ? attempts : 1,
    firstAttemptAt: at,
    failedAt: at,
    event: busEvent,
  };
  return {
    deadLetter,
    response: {
      MessageId: randomUUID(),
      MD5OfMessageBody: createHash('md5').update(MessageBody, 'utf8').digest('hex'),
    },
  };
}

function terminalReasonOf(text: string | undefined): TerminalDeadLetterReason {
  if (text === undefined)
    throw invalid(`MessageAttributes.${ATTR.terminalReason} is required: {kind, field?, message} as JSON`);
  let value: unknown;
  try {
    value = parseBoundedJson(text, { maxDepth: 2, maxBytes: 4096 });
  } catch {
    throw invalid(`MessageAttributes.${ATTR.terminalReason} is not JSON`);
  }
  const { kind, field, message } = (value ?? {}) as Record<string, unknown>;
  if (typeof kind !== 'string' || !TERMINAL_KIND_SET.has(kind))
    throw invalid(`MessageAttributes.${ATTR.terminalReason}.kind: expected one of ${[...TERMINAL_KINDS].join(', ')}`);
  if (typeof message !== 'string') throw invalid(`MessageAttributes.${ATTR.terminalReason}.message: expected a string`);
  if (field !== undefined && typeof field !== 'string')
    throw invalid(`MessageAttributes.${ATTR.terminalReason}.field: expected a string`);
  return {
    kind: kind as TerminalDeadLetterReason['kind'],
    ...(field !== undefined ? { field: sanitizeError(field) } : {}),
    message: sanitizeError(message),
  };
}
