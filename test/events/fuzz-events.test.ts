/**
 * Malformed events, thousands of them, seeded: every zod schema in events/ through parseEvent, and every
 * function's middy-wrapped handler. Each malformed input must be rejected with an error naming the field
 * it broke (or a parent or child of it) — never a TypeError/RangeError, never a hang, never prototype
 * pollution. Inputs that stay valid must get past parsing into the function's work (stubbed here).
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import * as events from '../../events/index.ts';
import { EventValidationError, parseEvent } from '../../events/index.ts';
import * as auditFunction from '../../functions/audit/handler.ts';
import * as cloudEventsFunction from '../../functions/cloud-events/handler.ts';
import * as probeFunction from '../../functions/probe/handler.ts';
import * as reconcileFunction from '../../functions/reconcile/handler.ts';
import * as rolloutFunction from '../../functions/rollout/handler.ts';
import {
  describe as describeValue,
  fuzzSeed,
  type Mutation,
  mutate,
  pathsRelated,
  pathText,
  Rng,
} from '../support/fuzz.ts';
import { captureOutput } from '../support/output-capture.ts';

const SEED = fuzzSeed();
const SCHEMA_CASES = 250;
const HANDLER_CASES = 500;
const HANG_MS = 2_000;

const envelope = (source: string, detailType: string, detail: unknown) => ({
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': detailType,
  source,
  account: '123456789012',
  time: '2026-03-01T08:00:00Z',
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/x'],
  detail,
});
const changeNotice = {
  clusterId: 'cluster-01',
  kind: 'NodePool',
  name: 'pool-00',
  uid: 'u-1',
  resourceVersion: '42',
  generation: 3,
  changeType: 'MODIFIED',
  poolName: 'pool-00',
  observedAt: '2026-03-01T08:00:00.123Z',
};
const reconcileRequest = { clusterId: 'cluster-01', nodePool: 'pool-00', reason: 'cli', requestedBy: 'spiritctl' };
const auditRequest = {
  clusterId: 'cluster-01',
  runId: 'run-1',
  requestedAt: '2026-03-01T08:00:00Z',
  requestedBy: 'schedule',
};
const leaderProbeRequest = { clusterId: 'cluster-01', runId: 'tick-1', requestedBy: 'schedule' };
const stateChange = { 'instance-id': 'i-0123456789abcdef0', state: 'terminated', clusterId: 'cluster-01' };
const spot = { 'instance-id': 'i-0123456789abcdef0', 'instance-action': 'terminate' };
const rolloutStart = {
  id: 'agent-020',
  version: '0.2.0',
  patch: { agent: { version: '0.2.0' } },
  selector: { region: 'eu' },
  canary: ['cluster-02'],
  maxConcurrency: '25%',
  maxFailures: 1,
  soak: '5m',
  progressDeadline: 1800000,
  autoRollback: true,
};
const startCommand = { command: 'start', rollout: rolloutStart, requestedBy: 'spiritctl' };
const scheduled = envelope(events.SCHEDULED_EVENT_SOURCE, events.SCHEDULED_EVENT_DETAIL_TYPE, {});

/** A valid sample of every schema events/ exports: the test fails when a new schema has none. */
const SAMPLES: Record<string, unknown> = {
  anyEventEnvelopeSchema: envelope('anything', 'Anything', { a: [1, { b: 'c' }] }),
  changeNoticeDetailSchema: changeNotice,
  changeNoticeEventSchema: envelope(events.FORWARDER_SOURCE, events.CHANGE_NOTICE_DETAIL_TYPE, changeNotice),
  reconcileRequestDetailSchema: reconcileRequest,
  reconcileRequestEventSchema: envelope(
    events.RECONCILER_SOURCE,
    events.RECONCILE_REQUEST_DETAIL_TYPE,
    reconcileRequest,
  ),
  auditRequestDetailSchema: auditRequest,
  auditRequestEventSchema: envelope(events.RECONCILER_SOURCE, events.AUDIT_REQUEST_DETAIL_TYPE, auditRequest),
  leaderProbeRunIdSchema: 'tick-1',
  leaderProbeRequestDetailSchema: leaderProbeRequest,
  leaderProbeRequestEventSchema: envelope(
    events.RECONCILER_SOURCE,
    events.LEADER_PROBE_REQUEST_DETAIL_TYPE,
    leaderProbeRequest,
  ),
  ec2StateChangeDetailSchema: stateChange,
  ec2StateChangeEventSchema: envelope(events.EC2_SOURCE, events.EC2_STATE_CHANGE_DETAIL_TYPE, stateChange),
  ec2SpotInterruptionDetailSchema: spot,
  ec2SpotInterruptionEventSchema: envelope(events.EC2_SOURCE, events.EC2_SPOT_INTERRUPTION_DETAIL_TYPE, spot),
  rolloutStartInputSchema: rolloutStart,
  rolloutCommandDetailSchema: startCommand,
  rolloutCommandEventSchema: envelope(events.RECONCILER_SOURCE, events.ROLLOUT_COMMAND_DETAIL_TYPE, startCommand),
  rolloutScheduleEventSchema: scheduled,
};

const schemas = Object.entries(events).filter(([, v]) => typeof (v as z.ZodMiniType)?.safeParse === 'function') as [
  string,
  z.ZodMiniType,
][];

interface Problem {
  where: string;
  case: number;
  mutation: string;
  error: string;
}

const fmt = (p: Problem) => `${p.where} case ${p.case} (seed ${SEED}): ${p.mutation} → ${p.error.slice(0, 300)}`;
const mutationText = (m: Mutation) => `${pathText(m.path)} ${m.op}`;
/**
 * What an engine error looks like. Not every TypeError is one: the project throws TypeError subclasses for
 * validation (RolloutSpecError, state-table key checks), and those must name their field like any other.
 */
const CRASH =
  /Cannot read propert|Cannot set propert|is not a function|is not iterable|is not defined|Cannot convert|Maximum call stack|Invalid array length|Invalid time value|Invalid string length|circular structure|not an object/;

/** The error names the mutated field (or a parent or child of it); for a replaced root any field will do. */
function namesField(err: Error, m: Mutation): boolean {
  const mutated = pathText(m.path);
  if (err instanceof EventValidationError) {
    return err.issues.length > 0 && (m.path.length === 0 || err.issues.some((i) => pathsRelated(i.path, mutated)));
  }
  // Other validation errors (RolloutSpecError, "a Scheduled Event must come from …") name a field by its key.
  const keys = m.path.filter((k): k is string => typeof k === 'string');
  const namesSomeField = /^[\w.-]+: /.test(err.message);
  return (m.path.length === 0 || m.container === true) && namesSomeField
    ? true
    : keys.some((k) => err.message.includes(k));
}

describe(`fuzzed events (seed ${SEED}; replay with PS_FUZZ_SEED=${SEED})`, () => {
  it('every exported schema has a valid sample, and every sample is valid', () => {
    expect(schemas.map(([name]) => name).sort()).toEqual(Object.keys(SAMPLES).sort());
    for (const [name, schema] of schemas) expect(schema.safeParse(SAMPLES[name]).success, name).toBe(true);
  });

  it(`rejects malformed input to every schema with an error naming the field (${schemas.length} schemas × ${SCHEMA_CASES} cases)`, () => {
    const rng = new Rng(SEED);
    const problems: Problem[] = [];
    let rejected = 0;
    let cases = 0;
    for (const [name, schema] of schemas) {
      for (let i = 0; i < SCHEMA_CASES; i++) {
        cases++;
        const m = mutate(rng, SAMPLES[name]);
        // Some cases arrive as JSON text, as a Lambda test invoke or a raw body would give them.
        const asText = rng.chance(0.1);
        const input = asText ? (JSON.stringify(m.value) ?? 'undefined') : m.value;
        try {
          parseEvent(schema, input);
        } catch (err) {
          rejected++;
          const e = err as Error;
          if (!(e instanceof EventValidationError))
            problems.push({ where: name, case: i, mutation: mutationText(m), error: `${e.name}: ${e.message}` });
          else if (!namesField(e, m) && !(asText && m.value === undefined))
            problems.push({ where: name, case: i, mutation: mutationText(m), error: `unclear: ${e.message}` });
        }
      }
      // Broken JSON text is named as such.
      expect(() => parseEvent(schema, '{"version": "0", ')).toThrow(/\(event\): not valid JSON/);
    }
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
    expect(problems.map(fmt), `${problems.length} problems in ${cases} cases`).toEqual([]);
    expect(rejected, 'most mutations are malformed').toBeGreaterThan(cases * 0.6);
  });

  // ——— handlers ———

  /** Thrown by the stubbed dependencies: the event passed validation and the function started its work. */
  class ReachedWork extends Error {
    constructor(what: string) {
      super(`REACHED_WORK ${what}`);
      this.name = 'ReachedWork';
    }
  }
  /** A stand-in for any dependency: property reads give more stand-ins, calling (or awaiting) one throws ReachedWork. */
  const poison = (what: string): unknown =>
    // biome-ignore lint/complexity/useArrowFunction: a Proxy's target decides whether `new` on it works; the poison stays constructible as it was
    new Proxy(function () {}, {
      get: (_t, prop) =>
        prop === Symbol.toPrimitive
          ? () => {
              throw new ReachedWork(`${what} as a value`);
            }
          : poison(`${what}.${String(prop)}`),
      apply: () => {
        throw new ReachedWork(what);
      },
    });
  const silentMetrics = () => {
    const metrics = new Metrics({
      namespace: 'Fuzz',
      serviceName: 'fuzz',
      logger: { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} } as never,
    });
    Object.assign(metrics, { console: { log() {} } });
    return metrics;
  };
  const stubDeps = () =>
    new Proxy(
      {
        logger: new Logger({ serviceName: 'fuzz', logLevel: 'SILENT' }),
        table: { doc: poison('table.doc'), name: 'fuzz-table' },
        metrics: silentMetrics(),
        clock: () => new Date('2026-03-01T08:00:00Z'),
        newRolloutId: () => 'fuzz-rollout',
        namespace: 'pool-spirit-system',
        eventBusName: 'fuzz-bus',
        concurrency: 4,
        clusterConcurrency: 4,
        leaseTtlMs: 90_000,
        maxPasses: 3,
        historyWindowMs: 86_400_000,
        retentionMs: 86_400_000,
        heartbeatMs: 3_600_000,
        // No dead-letter sink: input that can never succeed is thrown to the caller, which this test judges.
        deadLetters: undefined,
      } as Record<string, unknown>,
      { get: (t, prop) => (prop in t ? t[prop as string] : poison(`deps.${String(prop)}`)) },
    );
  const context: Context = {
    awsRequestId: 'fuzz',
    functionName: 'fuzz',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:fuzz',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/fuzz',
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };

  const HANDLERS: Record<string, { handler: (e: unknown, c: Context) => Promise<unknown>; samples: unknown[] }> = {
    reconcile: {
      handler: reconcileFunction.createReconcileHandler(stubDeps as never),
      samples: [SAMPLES.reconcileRequestEventSchema, SAMPLES.changeNoticeEventSchema],
    },
    audit: {
      handler: auditFunction.createAuditHandler(stubDeps as never),
      samples: [scheduled, SAMPLES.auditRequestEventSchema],
    },
    cloudEvents: {
      handler: cloudEventsFunction.createCloudEventsHandler(stubDeps as never),
      samples: [SAMPLES.ec2StateChangeEventSchema, SAMPLES.ec2SpotInterruptionEventSchema],
    },
    probe: {
      handler: probeFunction.createProbeHandler(stubDeps as never),
      samples: [
        scheduled,
        SAMPLES.leaderProbeRequestEventSchema,
        envelope(events.RECONCILER_SOURCE, events.LEADER_PROBE_REQUEST_DETAIL_TYPE, { clusterId: 'cluster-01' }),
        { clusterId: 'cluster-01' },
      ],
    },
    rollout: {
      handler: rolloutFunction.createRolloutHandler(stubDeps as never) as (e: unknown, c: Context) => Promise<unknown>,
      samples: [
        scheduled,
        SAMPLES.rolloutCommandEventSchema,
        startCommand,
        { command: 'pause', rolloutId: 'agent-020' },
        { command: 'tick' },
      ],
    },
  };

  async function settle(p: Promise<unknown>): Promise<{ ok: true } | { ok: false; error: Error } | { hang: true }> {
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<{ hang: true }>((resolve) => (timer = setTimeout(() => resolve({ hang: true }), HANG_MS)));
    try {
      return await Promise.race([
        p.then(
          () => ({ ok: true as const }),
          (error: Error) => ({ ok: false as const, error }),
        ),
        hang,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  const counts: Record<string, { rejected: number; reachedWork: number; ok: number; errors: Record<string, number> }> =
    {};
  afterAll(() => {
    console.info(`fuzzed handlers (seed ${SEED}): ${JSON.stringify(counts)}`);
  });

  for (const [name, { handler, samples }] of Object.entries(HANDLERS)) {
    it(`${name}: ${HANDLER_CASES} malformed EventBridge events, each rejected naming its field, none crashing or hanging`, async () => {
      const rng = new Rng(SEED ^ (name.length * 7919));
      const problems: Problem[] = [];
      const c = { rejected: 0, reachedWork: 0, ok: 0, errors: {} as Record<string, number> };
      counts[name] = c;
      for (let i = 0; i < HANDLER_CASES; i++) {
        const m = mutate(rng, samples[i % samples.length]);
        const outcome = await settle(Promise.resolve().then(() => handler(m.value, context)));
        if ('hang' in outcome) {
          problems.push({ where: name, case: i, mutation: mutationText(m), error: `no answer within ${HANG_MS} ms` });
          continue;
        }
        if (outcome.ok) {
          c.ok++;
          continue;
        }
        const e = outcome.error;
        if (
          e instanceof ReachedWork ||
          /REACHED_WORK/.test(String(e?.message)) ||
          /REACHED_WORK/.test(String((e?.cause as Error)?.message))
        ) {
          c.reachedWork++;
          continue;
        }
        c.rejected++;
        c.errors[e?.name] = (c.errors[e?.name] ?? 0) + 1;
        // A plain TypeError/RangeError is a crash; a named validation subclass (RolloutSpecError) is judged by its message.
        if (
          !(e instanceof Error) ||
          /^(TypeError|RangeError|ReferenceError|SyntaxError|InternalError)$/.test(e.name) ||
          CRASH.test(e.message)
        )
          problems.push({ where: name, case: i, mutation: mutationText(m), error: `crash ${e?.name}: ${e?.message}` });
        else if (!namesField(e, m))
          problems.push({ where: name, case: i, mutation: mutationText(m), error: `unclear ${e.name}: ${e.message}` });
      }
      expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
      expect(problems.map(fmt), `${problems.length} problems in ${HANDLER_CASES} cases of ${name}`).toEqual([]);
      expect(c.rejected, `${name} rejected most mutations (${describeValue(c)})`).toBeGreaterThan(HANDLER_CASES * 0.5);
    });
  }

  it('the deployed entry points (exported `handler`, dependencies from the environment) dead-letter broken envelopes once, naming the field', async () => {
    // The functions' dead-letter queue: an SQS SendMessage endpoint on a local port that keeps what it gets.
    const received: {
      target: string;
      body: { QueueUrl: string; MessageBody: string; MessageAttributes: Record<string, { StringValue: string }> };
    }[] = [];
    const queue = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        received.push({ target: String(req.headers['x-amz-target']), body: JSON.parse(text) });
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{"MessageId":"m-1"}');
      });
    });
    await new Promise<void>((resolve) => queue.listen(0, '127.0.0.1', resolve));
    const queueUrl = `http://127.0.0.1:${(queue.address() as AddressInfo).port}/123456789012/fuzz-dlq`;
    const saved = { ...process.env };
    // Any other AWS call would go to a closed local port: nothing here may get as far as calling AWS.
    Object.assign(process.env, {
      STATE_TABLE_NAME: 'fuzz-table',
      EVENT_BUS_NAME: 'fuzz-bus',
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: 'fuzz',
      AWS_SECRET_ACCESS_KEY: 'fuzz',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      DEAD_LETTER_QUEUE_URL: queueUrl,
    });
    const broken: [unknown, RegExp][] = [
      [null, /\(event\)|detail-type/],
      ['{"version":', /not valid JSON|detail-type|\(event\)/],
      [{ ...scheduled, 'detail-type': 42 }, /detail-type/],
      [{ ...scheduled, 'detail-type': 'x'.repeat(200_000) }, /detail-type/],
      [{ ...scheduled, 'detail-type': 'Scheduled Event\u202e' }, /detail-type/],
      [JSON.parse('{"__proto__": {"polluted": true}, "detail-type": null}'), /detail-type/],
      [{ ...scheduled, 'detail-type': { constructor: { prototype: { polluted: true } } } }, /detail-type/],
    ];
    // The deployed Metrics warn on every empty flush; that noise is not what this test looks at.
    const quiet = captureOutput();
    try {
      for (const [name, fn] of Object.entries({
        reconcileFunction,
        auditFunction,
        cloudEventsFunction,
        probeFunction,
        rolloutFunction,
      })) {
        for (const [event, names] of broken) {
          const before = received.length;
          const result = (await (fn.handler as (e: unknown, c: Context) => Promise<unknown>)(event, context)) as {
            result?: string;
            terminal?: { kind: string; field?: string; message: string };
          };
          expect(result?.result, `${name} did not give up on ${describeValue(event)}`).toBe('terminal');
          expect(`${result.terminal?.field}: ${result.terminal?.message}`, name).toMatch(names);
          expect(received.length - before, `${name}: dead letters for ${describeValue(event)}`).toBe(1);
          const sent = received[received.length - 1];
          expect(sent.target).toBe('AmazonSQS.SendMessage');
          expect(sent.body.QueueUrl).toBe(queueUrl);
          expect(JSON.parse(sent.body.MessageAttributes.TERMINAL_REASON.StringValue)).toEqual(result.terminal);
        }
      }
    } finally {
      quiet.stop();
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      await new Promise((resolve) => queue.close(resolve));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
