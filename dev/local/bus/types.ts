import type { TerminalReason } from '../../../core/outcome.ts';
import type { EventEnvelope } from '../../../events/envelope.ts';

/** An event as the bus routes and delivers it (the EventBridge envelope). */
export type BusEvent = EventEnvelope<Record<string, unknown>>;

/** A target function: receives the event (or the rule's constant input) and rejects to signal failure. */
export type TargetFn = (event: unknown) => Promise<unknown>;

/** A rule target's retry policy, with EventBridge's bounds and defaults. */
export interface RetryPolicy {
  /** 0-185; default 185. */
  maximumRetryAttempts?: number;
  /** 60-86400 seconds; default 86400. */
  maximumEventAgeInSeconds?: number;
}

export interface Rule {
  /** Unique per event bus. */
  name: string;
  /** Bus name (not ARN); default `default`. */
  eventBus?: string;
  /** Event pattern (object or JSON text). A rule has a pattern, a schedule, or both. */
  pattern?: unknown;
  /** `rate(...)` or `cron(...)`; fires `Scheduled Event` events from `aws.events`. */
  schedule?: string;
  /** Name of the target function in `targets`. */
  target: string;
  /** Constant JSON sent to the target instead of the event (EventBridge "Constant (JSON text)"). */
  input?: unknown;
  /** JSON path (`$.detail`, `$.detail.clusterId`) of the part of the event sent to the target. */
  inputPath?: string;
  retryPolicy?: RetryPolicy;
  /** Where EventBridge would send events that exhaust the policy; without one AWS drops them. */
  deadLetterQueueArn?: string;
  /** Disabled rules match nothing and fire nothing; default true. */
  enabled?: boolean;
}

/** `terminal`: the target itself gave up at once on input that can never succeed, and said why. */
export type DeadLetterReason = 'retries-exhausted' | 'maximum-event-age-exceeded' | 'terminal';

/** Why a target gave up at once (machine-readable: kind, the field at fault, a message). */
export type TerminalDeadLetterReason = TerminalReason;

/** An event delivery that gave up: the event, the rule, the last error (sanitised) and the attempts made. */
export interface DeadLetter {
  eventId: string;
  rule: string;
  eventBus: string;
  target: string;
  /** The rule's DLQ; null means EventBridge would have dropped the event (kept here so nothing is lost silently). */
  deadLetterQueueArn: string | null;
  reason: DeadLetterReason;
  /** Set when `reason` is `terminal`. */
  terminal?: TerminalDeadLetterReason;
  error: string;
  attempts: number;
  firstAttemptAt: string;
  failedAt: string;
  event: BusEvent;
  /** Set when the event was too deep or too large to keep whole: `event` then holds its envelope and `detail: {}`. */
  eventOmitted?: string;
}

export interface BusStats {
  /** PutEvents entries received (accepted + failed). */
  entriesReceived: number;
  entriesAccepted: number;
  entriesFailed: number;
  /** Events that matched at least one rule. */
  eventsMatched: number;
  /** Accepted events no rule matched. */
  eventsUnmatched: number;
  scheduledEventsFired: number;
  /** Target invocations, first attempts and retries. */
  attempts: number;
  retries: number;
  delivered: number;
  deadLettered: number;
  duplicatesInjected: number;
  /** Deliveries waiting for a concurrency slot, running now, or waiting for their retry timer. */
  queued: number;
  inFlight: number;
  waitingRetry: number;
}

/** A progress notification for callers that show live figures (the local fleet's progress view). */
export type BusActivity =
  | { type: 'accepted'; event: BusEvent; rules: string[] }
  | { type: 'delivered'; event: BusEvent; rule: string; attempts: number }
  | { type: 'attempt-failed'; event: BusEvent; rule: string; attempt: number; error: string; retryInMs: number | null }
  | { type: 'dead-letter'; deadLetter: DeadLetter };
