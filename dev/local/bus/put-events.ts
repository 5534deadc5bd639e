import { randomUUID } from 'node:crypto';
import { entrySize, MAX_ENTRIES_PER_CALL, MAX_ENTRIES_SIZE_BYTES } from '../../../events/put-events-limits.ts';
import { DEFAULT_EVENT_BUS } from '../../../events/source.ts';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson } from '../../../shared/bounded-json.ts';
import type { BusEvent } from './types.ts';

export { entrySize, MAX_ENTRIES_PER_CALL, MAX_ENTRIES_SIZE_BYTES };

/** A PutEvents entry as it arrives on the wire (AWS JSON 1.1). */
export interface PutEventsRequestEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Resources?: unknown;
  /** Epoch seconds from the SDK, or an ISO string. */
  Time?: unknown;
  TraceHeader?: unknown;
}

export type PutEventsResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

export interface PutEventsResult {
  FailedEntryCount: number;
  Entries: PutEventsResultEntry[];
}

/** A whole-call failure, sent as an AWS JSON error (`__type`, `message`) with an HTTP status. */
export class PutEventsCallError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: string, message: string, status = 400) {
    super(message);
    this.name = type;
    this.type = type;
    this.status = status;
  }
}

export type EntryFailure = { code: string; message: string };

export interface PutEventsContext {
  now: number;
  account: string;
  region: string;
  /** Whether an event bus of this name exists. */
  busExists(name: string): boolean;
  /** Fault injection: fail this entry with the given code (e.g. ThrottlingException, InternalFailure). */
  injectEntryFailure?: (entry: PutEventsRequestEntry, index: number) => EntryFailure | null | undefined;
}

export interface AcceptedEvent {
  eventBus: string;
  event: BusEvent;
}

/** Bus names arrive as names or ARNs (`arn:aws:events:region:account:event-bus/name`). */
export function busNameOf(nameOrArn: string): string {
  const m = /^arn:[^:]+:events:[^:]*:[^:]*:event-bus\/(.+)$/.exec(nameOrArn);
  return m ? m[1] : nameOrArn;
}

/** EventBridge writes event times to the second: `2026-01-01T00:00:00Z`. */
export function eventTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Validates a PutEvents request the way EventBridge does: request-level problems (no entries, more than
 * 10, entries over 256 KB in total) fail the call; entry-level problems fail only that entry, reported
 * in its result slot with ErrorCode/ErrorMessage, and the rest are accepted.
 */
export function handlePutEvents(
  body: unknown,
  ctx: PutEventsContext,
): { result: PutEventsResult; accepted: AcceptedEvent[] } {
  const entries = (body as { Entries?: unknown } | null)?.Entries;
  if (!Array.isArray(entries)) {
    throw new PutEventsCallError(
      'ValidationException',
      "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null",
    );
  }
  if (entries.length < 1 || entries.length > MAX_ENTRIES_PER_CALL) {
    throw new PutEventsCallError(
      'ValidationException',
      `1 validation error detected: Value '[...]' at 'entries' failed to satisfy constraint: Member must have length ${entries.length < 1 ? 'greater than or equal to 1' : `less than or equal to ${MAX_ENTRIES_PER_CALL}`}`,
    );
  }
  const total = entries.reduce((sum: number, e) => sum + entrySize((e ?? {}) as PutEventsRequestEntry), 0);
  if (total > MAX_ENTRIES_SIZE_BYTES) {
    throw new PutEventsCallError(
      'ValidationException',
      `Total size of the entries in the request is over the limit (${total} > ${MAX_ENTRIES_SIZE_BYTES} bytes).`,
    );
  }
  const results: PutEventsResultEntry[] = [];
  const accepted: AcceptedEvent[] = [];
  entries.forEach((raw, index) => {
    const entry = (raw ?? {}) as PutEventsRequestEntry;
    const outcome = acceptEntry(entry, index, ctx);
    if ('failure' in outcome) {
      results.push({ ErrorCode: outcome.failure.code, ErrorMessage: outcome.failure.message });
    } else {
      accepted.push(outcome.accepted);
      results.push({ EventId: outcome.accepted.event.id });
    }
  });
  return { result: { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results }, accepted };
}

function invalid(field: string, reason: string): { failure: EntryFailure } {
  return { failure: { code: 'InvalidArgument', message: `Parameter ${field} is not valid. Reason: ${reason}` } };
}

function acceptEntry(
  entry: PutEventsRequestEntry,
  index: number,
  ctx: PutEventsContext,
): { failure: EntryFailure } | { accepted: AcceptedEvent } {
  const required = ['Source', 'DetailType', 'Detail'] as const;
  for (const field of required) {
    const value = entry[field];
    if (value === undefined || value === null || value === '')
      return invalid(field, `${field} is a required argument.`);
    if (typeof value !== 'string') return invalid(field, `${field} must be a string.`);
  }
  let detail: unknown;
  try {
    // The call's total size is already bounded (256 KB); the depth bound keeps a 10,000-deep Detail from
    // overflowing whatever walks the event later (delivery's copy, the targets, the dead-letter store).
    detail = parseBoundedJson(entry.Detail as string, { maxDepth: MAX_JSON_DEPTH });
  } catch (err) {
    if (err instanceof JsonLimitError && err.kind === 'too-deep') {
      return { failure: { code: 'MalformedDetail', message: `Detail is malformed: it is ${err.message}.` } };
    }
    return { failure: { code: 'MalformedDetail', message: 'Detail is malformed.' } };
  }
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) {
    return { failure: { code: 'MalformedDetail', message: 'Detail is malformed: it must be a JSON object.' } };
  }
  const source = entry.Source as string;
  if (source.startsWith('aws.')) {
    return {
      failure: {
        code: 'NotAuthorizedForSourceException',
        message: `Not authorized for the source ${source}: "aws." sources are reserved for AWS services.`,
      },
    };
  }
  let resources: string[] = [];
  if (entry.Resources !== undefined && entry.Resources !== null) {
    if (!Array.isArray(entry.Resources) || !entry.Resources.every((r) => typeof r === 'string')) {
      return invalid('Resources', 'Resources must be a list of strings.');
    }
    resources = entry.Resources as string[];
  }
  let timeMs = ctx.now;
  if (entry.Time !== undefined && entry.Time !== null) {
    const t =
      typeof entry.Time === 'number'
        ? entry.Time * 1000
        : typeof entry.Time === 'string'
          ? Date.parse(entry.Time)
          : NaN;
    if (!Number.isFinite(t)) return invalid('Time', 'Time must be a timestamp.');
    timeMs = t;
  }
  const busRaw = entry.EventBusName;
  if (busRaw !== undefined && busRaw !== null && typeof busRaw !== 'string')
    return invalid('EventBusName', 'EventBusName must be a string.');
  const eventBus = busRaw ? busNameOf(busRaw) : DEFAULT_EVENT_BUS;
  if (!ctx.busExists(eventBus)) {
    return { failure: { code: 'ResourceNotFoundException', message: `Event bus ${eventBus} does not exist.` } };
  }
  const injected = ctx.injectEntryFailure?.(entry, index);
  if (injected) return { failure: injected };
  return {
    accepted: {
      eventBus,
      event: {
        version: '0',
        id: randomUUID(),
        'detail-type': entry.DetailType as string,
        source,
        account: ctx.account,
        time: eventTime(timeMs),
        region: ctx.region,
        resources,
        detail: detail as Record<string, unknown>,
      },
    },
  };
}
