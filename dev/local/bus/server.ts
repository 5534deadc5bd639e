import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anyEventEnvelopeSchema } from '../../../events/envelope.ts';
import { DEFAULT_EVENT_BUS } from '../../../events/source.ts';
import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson, valueDepthExceeds } from '../../../shared/bounded-json.ts';
import { type Clock, systemClock } from './clock.ts';
import { deadLetterFromSendMessage, queueUrlFor, SQS_SEND_MESSAGE_TARGET, SqsCallError } from './dead-letter-queue.ts';
import { Dispatcher, type ResolvedRule, scheduledEvent } from './delivery.ts';
import { appendDeadLetter, dlqFilePath, storableDeadLetter } from './dlq-store.ts';
import { InvalidPatternError, matches, testEventPattern } from './pattern.ts';
import {
  type EntryFailure,
  eventTime,
  handlePutEvents,
  PutEventsCallError,
  type PutEventsRequestEntry,
  type PutEventsResult,
} from './put-events.ts';
import { resolveRules } from './rules.ts';
import { nextFireTime } from './schedule.ts';
import type { BusActivity, BusEvent, BusStats, DeadLetter, Rule, TargetFn } from './types.ts';
import { type BusUsage, BusUsageMeter } from './usage.ts';

export type { Schedule } from './schedule.ts';
export { InvalidScheduleError, nextFireTime, parseSchedule } from './schedule.ts';

export interface LocalBusOptions {
  /** Port on 127.0.0.1; 0 (default) lets the OS pick. */
  port?: number;
  rules: Rule[];
  targets: Record<string, TargetFn>;
  retry?: {
    /** First backoff step; doubles per attempt (default 1000 ms). Tests use a few ms. */
    baseDelayMs?: number;
    /** Cap of one backoff step (default 60 s). */
    maxDelayMs?: number;
  };
  /** Probability 0-1 that a delivery is duplicated (1 = every delivery twice). */
  injectDuplicates?: number;
  /** Hold routed events in a window and deliver them shuffled; `true` = 10 ms window (timed on `clock`). */
  injectReorder?: boolean | { windowMs: number };
  /** Fail chosen PutEvents entries (e.g. with ThrottlingException) to test senders' resend logic. */
  injectEntryFailure?: (entry: PutEventsRequestEntry, index: number) => EntryFailure | null | undefined;
  /** Fail whole PutEvents calls (e.g. 500 InternalException) to test senders' retry logic. */
  injectCallFailure?: () => { status: number; type: string; message: string } | null | undefined;
  clock?: Clock;
  /** Source of randomness for jitter and fault injection (default Math.random). */
  random?: () => number;
  account?: string;
  /** Region put in events when the request's signature names none (default us-east-1). */
  region?: string;
  /** Extra event buses that exist besides `default` and those the rules name. */
  eventBuses?: string[];
  /** Persist dead letters to `<stateDir>/dlq.jsonl` (read by `spiritctl events dlq`). */
  stateDir?: string;
  /** Deliveries running at once (default 64). */
  maxConcurrency?: number;
  /** Fail an attempt whose target has not settled after this long (default: no limit). */
  attemptTimeoutMs?: number;
  onActivity?: (activity: BusActivity) => void;
}

export interface LocalBus {
  /** `http://127.0.0.1:<port>`: give it to the AWS SDK as `endpoint`. */
  endpoint: string;
  port: number;
  /** Same validation and routing as the HTTP endpoint, without the HTTP hop. */
  putEvents(entries: PutEventsRequestEntry[], region?: string): PutEventsResult;
  /** Routes an already-formed event (e.g. an `aws.ec2` state change that PutEvents would refuse). */
  injectEvent(
    event: Partial<BusEvent> & Pick<BusEvent, 'source' | 'detail-type' | 'detail'>,
    eventBus?: string,
  ): BusEvent;
  deadLetters(): DeadLetter[];
  /**
   * URL of the dead-letter queue of `target`'s rules, served here as SQS SendMessage (a function records a
   * dead letter itself there, as it does on SQS in the cloud); undefined when its rules name none.
   */
  deadLetterQueueUrl(target: string): string | undefined;
  stats(): BusStats;
  /** What EventBridge and SQS would bill and count against quotas so far (dev/local/bus/usage.ts). */
  usage(): BusUsage;
  /**
   * Resolves when nothing is queued, in flight, waiting for a retry or held for reordering. Schedules do not
   * count. With a FakeClock, pending retries only progress when the test advances the clock.
   */
  drain(): Promise<void>;
  /**
   * Stops delivering at once: what is queued or waiting for a retry is dropped (a stopped EventBridge target
   * gets nothing more; a kill loses the same), and only the attempts running now are waited for, at most
   * `graceMs` (real time). Resolves to how many deliveries were dropped. The endpoint still accepts events
   * until stop().
   */
  stopDeliveries(graceMs: number): Promise<{ dropped: number; stillRunning: number }>;
  stop(): Promise<void>;
}

const JSON_11 = 'application/x-amz-json-1.1';
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** Starts the local EventBridge-compatible bus: PutEvents over HTTP, pattern rules, schedules, retries, DLQ. */
export async function startLocalBus(opts: LocalBusOptions): Promise<LocalBus> {
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? Math.random;
  const account = opts.account ?? '000000000000';
  const defaultRegion = opts.region ?? 'us-east-1';
  const duplicateProbability = opts.injectDuplicates ?? 0;
  if (!(duplicateProbability >= 0 && duplicateProbability <= 1)) {
    throw new Error(`injectDuplicates must be a probability from 0 to 1, got ${duplicateProbability}`);
  }
  const rules = resolveRules(opts.rules, opts.targets);
  const buses = new Set([DEFAULT_EVENT_BUS, ...rules.map((r) => r.eventBus), ...(opts.eventBuses ?? [])]);
  const dlqFile = opts.stateDir ? dlqFilePath(opts.stateDir) : null;
  const deadLetters: DeadLetter[] = [];
  const counts = {
    entriesReceived: 0,
    entriesAccepted: 0,
    entriesFailed: 0,
    eventsMatched: 0,
    eventsUnmatched: 0,
    scheduledEventsFired: 0,
  };
  const onActivity = opts.onActivity ?? (() => {});
  const usage = new BusUsageMeter();
  const reorderWindowMs = opts.injectReorder ? (opts.injectReorder === true ? 10 : opts.injectReorder.windowMs) : null;

  const dispatcher = new Dispatcher({
    clock,
    targets: opts.targets,
    random,
    baseDelayMs: opts.retry?.baseDelayMs ?? 1000,
    maxDelayMs: opts.retry?.maxDelayMs ?? 60_000,
    maxConcurrency: opts.maxConcurrency ?? 64,
    attemptTimeoutMs: opts.attemptTimeoutMs ?? null,
    duplicateProbability,
    reorderWindowMs,
    onActivity,
    onDeadLetter: (dl) => {
      usage.sqsMessage();
      // Never throws: the store bounds what it serialises, and a failed write is reported, not fatal.
      const { deadLetter } = storableDeadLetter(dl);
      deadLetters.push(deadLetter);
      if (!dlqFile) return;
      try {
        appendDeadLetter(dlqFile, deadLetter);
      } catch (err) {
        process.stderr.write(
          `local bus: could not write dead letter ${deadLetter.eventId} to ${dlqFile}: ${(err as Error).message}\n`,
        );
      }
    },
  });

  function route(event: BusEvent, eventBus: string): void {
    const matched = rules.filter(
      (r) => r.enabled && r.compiled && r.eventBus === eventBus && matches(r.compiled, event),
    );
    usage.matched(matched.map((r) => r.target));
    if (matched.length) counts.eventsMatched++;
    else counts.eventsUnmatched++;
    onActivity({ type: 'accepted', event, rules: matched.map((r) => r.name) });
    dispatcher.dispatch(event, matched);
  }

  function putEvents(entries: PutEventsRequestEntry[] | unknown, region = defaultRegion): PutEventsResult {
    const { result, accepted } = handlePutEvents(
      { Entries: entries },
      {
        now: clock.now(),
        account,
        region,
        busExists: (name) => buses.has(name),
        injectEntryFailure: opts.injectEntryFailure,
      },
    );
    usage.putEventsCall();
    result.Entries.forEach((r, i) => {
      if ('EventId' in r) usage.accepted((entries as PutEventsRequestEntry[])[i] ?? {});
    });
    counts.entriesReceived += result.Entries.length;
    counts.entriesFailed += result.FailedEntryCount;
    counts.entriesAccepted += accepted.length;
    for (const { event, eventBus } of accepted) route(event, eventBus);
    return result;
  }

  // Schedules: each enabled schedule rule keeps one timer for its next fire time.
  const scheduleTimers = new Map<string, unknown>();
  let stopped = false;
  function arm(rule: ResolvedRule, after: number): void {
    const next = nextFireTime(rule.schedule!, after);
    if (!next || stopped) return;
    const at = next.getTime();
    scheduleTimers.set(
      rule.name,
      clock.setTimeout(() => fire(rule, at), at - clock.now()),
    );
  }
  function fire(rule: ResolvedRule, at: number): void {
    if (stopped) return;
    counts.scheduledEventsFired++;
    usage.scheduled(rule.target);
    const event = scheduledEvent(rule, randomUUID(), at, account, defaultRegion);
    onActivity({ type: 'accepted', event, rules: [rule.name] });
    dispatcher.dispatch(event, [rule]);
    arm(rule, at);
  }
  for (const rule of rules) if (rule.schedule && rule.enabled) arm(rule, clock.now());

  const server = createServer((req, res) => {
    handleHttp(req, res).catch((err) => sendError(res, 500, 'InternalException', (err as Error).message));
  });

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return sendError(res, 405, 'UnknownOperationException', 'only POST is supported');
    const body = await readBody(req);
    if (body === null) return sendError(res, 413, 'ValidationException', `request body over ${MAX_BODY_BYTES} bytes`);
    const operation = String(req.headers['x-amz-target'] ?? '');
    let parsed: Record<string, unknown>;
    try {
      const value: unknown = body.length ? parseBoundedJson(body, { maxDepth: MAX_JSON_DEPTH }) : {};
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
      parsed = value as Record<string, unknown>;
    } catch (err) {
      if (err instanceof JsonLimitError && err.kind === 'too-deep')
        return sendError(res, 400, 'SerializationException', `request body is ${err.message}`);
      return sendError(res, 400, 'SerializationException', 'request body is not a JSON object');
    }
    if (operation === 'AWSEvents.PutEvents') {
      const injected = opts.injectCallFailure?.();
      if (injected) return sendError(res, injected.status, injected.type, injected.message);
      try {
        return sendJson(res, 200, putEvents(parsed.Entries, regionOf(req) ?? defaultRegion));
      } catch (err) {
        if (err instanceof PutEventsCallError) return sendError(res, err.status, err.type, err.message);
        throw err;
      }
    }
    if (operation === 'AWSEvents.TestEventPattern') {
      const { EventPattern, Event } = parsed;
      try {
        if (typeof Event !== 'string') throw new PutEventsCallError('ValidationException', 'Event is required');
        let event: unknown;
        try {
          event = parseBoundedJson(Event, { maxDepth: MAX_JSON_DEPTH });
        } catch (err) {
          if (err instanceof JsonLimitError && err.kind === 'too-deep')
            throw new PutEventsCallError('ValidationException', `Event is ${err.message}`);
          throw new PutEventsCallError('InvalidEventPatternException', 'Event is not valid JSON');
        }
        return sendJson(res, 200, { Result: testEventPattern(EventPattern, event) });
      } catch (err) {
        if (err instanceof InvalidPatternError)
          return sendError(
            res,
            400,
            'InvalidEventPatternException',
            `Event pattern is not valid. Reason: ${err.message}`,
          );
        if (err instanceof PutEventsCallError) return sendError(res, err.status, err.type, err.message);
        throw err;
      }
    }
    if (operation === SQS_SEND_MESSAGE_TARGET) {
      try {
        const { deadLetter, response } = deadLetterFromSendMessage(parsed, rules, clock.now());
        dispatcher.recordDeadLetter(deadLetter);
        return sendJson(res, 200, response);
      } catch (err) {
        if (err instanceof SqsCallError) return sendError(res, err.status, err.type, err.message);
        throw err;
      }
    }
    return sendError(
      res,
      400,
      'UnknownOperationException',
      `operation ${operation || '(no X-Amz-Target)'} is not supported by the local bus`,
    );
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    putEvents: (entries, region) => putEvents(entries, region),
    injectEvent(partial, eventBus = DEFAULT_EVENT_BUS) {
      // The same depth bound as PutEvents' Detail (the envelope adds one level).
      if (valueDepthExceeds(partial.detail, MAX_JSON_DEPTH))
        throw new Error(
          `injectEvent: detail is nested deeper than ${MAX_JSON_DEPTH} levels (the limit is ${MAX_JSON_DEPTH})`,
        );
      const event = anyEventEnvelopeSchema.parse({
        version: '0',
        id: randomUUID(),
        account,
        time: eventTime(clock.now()),
        region: defaultRegion,
        resources: [],
        ...partial,
      }) as BusEvent;
      route(event, eventBus);
      return event;
    },
    deadLetters: () => [...deadLetters],
    usage: () => usage.snapshot(),
    deadLetterQueueUrl(target) {
      const arn = rules.find((r) => r.target === target && r.deadLetterQueueArn)?.deadLetterQueueArn;
      return arn ? queueUrlFor(`http://127.0.0.1:${port}`, arn) : undefined;
    },
    stats: () => ({
      ...counts,
      ...dispatcher.counters,
      queued: dispatcher.queued,
      inFlight: dispatcher.inFlight,
      waitingRetry: dispatcher.waitingRetry,
    }),
    drain: () => dispatcher.drain(),
    async stopDeliveries(graceMs) {
      const dropped = dispatcher.stop();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([dispatcher.drain(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      return { dropped, stillRunning: dispatcher.inFlight };
    },
    async stop() {
      stopped = true;
      for (const handle of scheduleTimers.values()) clock.clearTimeout(handle);
      scheduleTimers.clear();
      dispatcher.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The region from a SigV4 Authorization header's credential scope (`Credential=AKID/date/region/events/...`). */
function regionOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /Credential=[^/]+\/\d{8}\/([^/]+)\/events\//.exec(auth) : null;
  return m?.[1];
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': JSON_11,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { __type: type, message });
}
