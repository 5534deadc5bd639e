/**
 * Input that can never succeed, sent through the local bus (serverless.yml's rules and retry policies) to
 * the real handlers (real dynalite table, real local Kubernetes API): each is attempted exactly once, logged
 * once naming its field, kept as one dead letter saying why (sent by the function over SQS SendMessage to
 * the bus's queue endpoint, the code path the cloud uses), and leaves no table item without a TTL. The
 * control: a cluster API answering 500 is still retried.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Item } from '../../../adapters/state-table/index.ts';
import {
  deregisterCluster,
  keys,
  readPoolState,
  registerCluster,
  TTL_ATTRIBUTE,
} from '../../../adapters/state-table/index.ts';
import type { DeadLetter, LocalBus, TargetFn } from '../../../dev/local/bus/index.ts';
import { startLocalBus } from '../../../dev/local/bus/index.ts';
import { loadRules } from '../../../dev/local/bus/rules-from-serverless.ts';
import { localDeadLetters } from '../../../dev/local/functions/containers.ts';
import {
  AUDIT_REQUEST_DETAIL_TYPE,
  CHANGE_NOTICE_DETAIL_TYPE,
  FORWARDER_SOURCE,
  LEADER_PROBE_REQUEST_DETAIL_TYPE,
  RECONCILE_REQUEST_DETAIL_TYPE,
  RECONCILER_SOURCE,
} from '../../../events/index.ts';
import { createAuditHandler } from '../../../functions/audit/handler.ts';
import { createCloudEventsHandler } from '../../../functions/cloud-events/handler.ts';
import { createProbeHandler } from '../../../functions/probe/handler.ts';
import { createReconcileHandler } from '../../../functions/reconcile/handler.ts';
import { createRolloutHandler } from '../../../functions/rollout/handler.ts';
import { waitFor } from '../../support/wait.ts';
import type { ReconcileWorld } from '../reconcile/harness.ts';
import { CLUSTER_ID, lambdaContext, startReconcileWorld } from '../reconcile/harness.ts';

const UNREGISTERED = 'nobody-registered-this';
const REFUSED = 'refused-access';
const FUNCTIONS = ['reconcile', 'audit', 'probe', 'cloudEvents', 'rollout'] as const;

let world: ReconcileWorld;
let bus: LocalBus;
let eventBusName: string;
/** Every log line the handlers wrote, as JSON text. */
const logLines: string[] = [];
/** Target invocations per event id: the attempts the bus made. */
const attempts = new Map<string, number>();

function capturingLogger(serviceName: string): Logger {
  const logger = new Logger({ serviceName, logLevel: 'INFO' });
  const keep = (line: string) => void logLines.push(line);
  Object.assign(logger, { console: { info: keep, warn: keep, error: keep, debug: keep, log: keep, trace: keep } });
  return logger;
}

function quietMetrics(serviceName: string): Metrics {
  const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const metrics = new Metrics({ namespace: 'PoolSpiritTest', serviceName, logger: silent });
  Object.assign(metrics, { console: { log() {} } });
  return metrics;
}

beforeAll(async () => {
  // The local API: the control test injects a failing cluster API, which only it can.
  world = await startReconcileWorld({ controlPlane: 'local' });
  const rules = loadRules(join(import.meta.dirname, '..', '..', '..', 'serverless.yml'));
  eventBusName = rules.find((r) => r.target === 'reconcile' && r.pattern)?.eventBus ?? 'default';
  const sink = (name: string) => localDeadLetters(bus.deadLetterQueueUrl(name));
  const observed = (name: string) => ({
    logger: capturingLogger(`terminal-${name}`),
    metrics: quietMetrics(`terminal-${name}`),
  });
  const { table } = world;
  const events = { putEvents: async (entries: Parameters<LocalBus['putEvents']>[0]) => bus.putEvents(entries).Entries };
  // Built on first use: the sinks need the bus's address, and the bus needs its targets first.
  const handlers: Record<string, (event: unknown) => Promise<unknown>> = {};
  const build: Record<(typeof FUNCTIONS)[number], () => (event: unknown) => Promise<unknown>> = {
    reconcile: () => {
      const h = createReconcileHandler({ ...world.deps, ...observed('reconcile'), deadLetters: sink('reconcile') });
      return (e) => h(e, lambdaContext(randomUUID()));
    },
    audit: () => {
      const h = createAuditHandler({ table, events, eventBusName, ...observed('audit'), deadLetters: sink('audit') });
      return (e) => h(e, lambdaContext(randomUUID()));
    },
    probe: () => {
      const h = createProbeHandler({ table, ...observed('probe'), deadLetters: sink('probe') });
      return (e) => h(e, lambdaContext(randomUUID()));
    },
    cloudEvents: () => {
      const h = createCloudEventsHandler({
        table,
        events,
        eventBusName,
        ...observed('cloud-events'),
        deadLetters: sink('cloudEvents'),
      });
      return (e) => h(e, lambdaContext(randomUUID()));
    },
    rollout: () => {
      const h = createRolloutHandler({ table, ...observed('rollout'), deadLetters: sink('rollout') });
      return (e) => h(e, lambdaContext(randomUUID()));
    },
  };
  const targets: Record<string, TargetFn> = {};
  for (const name of FUNCTIONS) {
    targets[name] = (event) => {
      const id = (event as { id?: string }).id ?? '';
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      const handle = handlers[name] ?? build[name]();
      handlers[name] = handle;
      return handle(event);
    };
  }
  // The rules' own retry policies (20 retries for reconcile), with short backoff steps to keep the control fast.
  bus = await startLocalBus({ rules, targets, retry: { baseDelayMs: 5, maxDelayMs: 40 } });
}, 60_000);

afterAll(async () => {
  await bus?.stop();
  await world?.stop();
});

interface Observed {
  attempts: number;
  deadLetters: DeadLetter[];
  /** Log lines (of this delivery) that name the field. */
  linesNaming: (field: string) => string[];
  /** Milliseconds from PutEvents to the dead letter being kept. */
  msToDeadLetter: number;
}

async function deliver(put: () => string): Promise<Observed> {
  const lettersBefore = bus.deadLetters().length;
  const linesBefore = logLines.length;
  const started = performance.now();
  const id = put();
  const letters = await waitFor(
    () => (bus.deadLetters().length > lettersBefore ? bus.deadLetters().slice(lettersBefore) : undefined),
    20_000,
    `a dead letter for ${id}`,
  );
  const msToDeadLetter = performance.now() - started;
  await bus.drain();
  const lines = logLines.slice(linesBefore);
  return {
    attempts: attempts.get(id) ?? 0,
    deadLetters: bus.deadLetters().slice(lettersBefore),
    linesNaming: (field) => lines.filter((l) => l.includes(field)),
    msToDeadLetter: letters.length ? msToDeadLetter : NaN,
  };
}

function putOnStackBus(source: string, detailType: string, detail: Record<string, unknown>): string {
  const [entry] = bus.putEvents([
    { Source: source, DetailType: detailType, Detail: JSON.stringify(detail), EventBusName: eventBusName },
  ]).Entries;
  if (!('EventId' in entry)) throw new Error(`the bus refused the entry: ${entry.ErrorCode} ${entry.ErrorMessage}`);
  return entry.EventId;
}

const reconcileRequest = (detail: Record<string, unknown>) => () =>
  putOnStackBus(RECONCILER_SOURCE, RECONCILE_REQUEST_DETAIL_TYPE, detail);
const changeNotice = (detail: Record<string, unknown>) => () =>
  putOnStackBus(FORWARDER_SOURCE, CHANGE_NOTICE_DETAIL_TYPE, {
    clusterId: CLUSTER_ID,
    kind: 'NodePool',
    uid: 'u-1',
    resourceVersion: '1',
    changeType: 'MODIFIED',
    observedAt: new Date().toISOString(),
    ...detail,
  });

const CASES: { what: string; target: string; put: () => string; kind: string; field: string }[] = [
  {
    what: 'a reconcile request whose detail fails its schema (no nodePool)',
    target: 'reconcile',
    put: reconcileRequest({ clusterId: CLUSTER_ID, reason: 'e2e', requestedBy: 'e2e' }),
    kind: 'invalid-event',
    field: 'detail.nodePool',
  },
  {
    what: 'a reconcile request for a cluster nobody registered',
    target: 'reconcile',
    put: reconcileRequest({ clusterId: UNREGISTERED, nodePool: 'pool-a', reason: 'e2e', requestedBy: 'e2e' }),
    kind: 'unknown-cluster',
    field: 'detail.clusterId',
  },
  {
    what: 'a reconcile request whose pool name cannot be a table key',
    target: 'reconcile',
    put: reconcileRequest({ clusterId: CLUSTER_ID, nodePool: 'Pool#1', reason: 'e2e', requestedBy: 'e2e' }),
    kind: 'unkeyable-name',
    field: 'detail.nodePool',
  },
  {
    what: 'a change notice whose poolName cannot be a table key',
    target: 'reconcile',
    put: changeNotice({ name: 'pool-b', poolName: 'UPPER-case' }),
    kind: 'unkeyable-name',
    field: 'detail.poolName',
  },
  {
    what: 'a change notice for a cluster nobody registered',
    target: 'reconcile',
    put: changeNotice({ clusterId: UNREGISTERED, name: 'pool-c', poolName: 'pool-c' }),
    kind: 'unknown-cluster',
    field: 'detail.clusterId',
  },
  {
    what: 'an audit request whose detail fails its schema (runId with "#")',
    target: 'audit',
    put: () =>
      putOnStackBus(RECONCILER_SOURCE, AUDIT_REQUEST_DETAIL_TYPE, {
        clusterId: CLUSTER_ID,
        runId: 'run#1',
        requestedAt: new Date().toISOString(),
        requestedBy: 'e2e',
      }),
    kind: 'invalid-event',
    field: 'detail.runId',
  },
  {
    what: 'an audit request for a cluster nobody registered',
    target: 'audit',
    put: () =>
      putOnStackBus(RECONCILER_SOURCE, AUDIT_REQUEST_DETAIL_TYPE, {
        clusterId: UNREGISTERED,
        runId: 'run-1',
        requestedAt: new Date().toISOString(),
        requestedBy: 'e2e',
      }),
    kind: 'unknown-cluster',
    field: 'detail.clusterId',
  },
  {
    what: 'a leader probe request for a cluster nobody registered',
    target: 'probe',
    put: () => putOnStackBus(RECONCILER_SOURCE, LEADER_PROBE_REQUEST_DETAIL_TYPE, { clusterId: UNREGISTERED }),
    kind: 'unknown-cluster',
    field: 'detail.clusterId',
  },
  {
    what: 'an EC2 state change naming a cluster nobody registered',
    target: 'cloudEvents',
    put: () =>
      bus.injectEvent({
        source: 'aws.ec2',
        'detail-type': 'EC2 Instance State-change Notification',
        detail: { 'instance-id': 'i-0123456789abcdef0', state: 'terminated', clusterId: UNREGISTERED },
      }).id,
    kind: 'unknown-cluster',
    field: 'detail.clusterId',
  },
];

async function tableItems(): Promise<Item[]> {
  const out = await world.table.doc.send(new ScanCommand({ TableName: world.table.name, ConsistentRead: true }));
  return out.Items ?? [];
}

describe('input that can never succeed, through the local bus to the real handlers', () => {
  const timings: Record<string, number> = {};
  afterAll(() => console.info(`ms from PutEvents to dead letter: ${JSON.stringify(timings)}`));

  for (const c of CASES) {
    it(`${c.what}: 1 attempt, 1 log line naming ${c.field}, 1 dead letter saying ${c.kind}`, async () => {
      const seen = await deliver(c.put);
      timings[c.what] = Math.round(seen.msToDeadLetter);
      expect(seen.attempts, 'attempts').toBe(1);
      expect(seen.linesNaming(`"field":"${c.field}"`), 'log lines naming the field').toHaveLength(1);
      expect(seen.deadLetters, 'dead letters').toHaveLength(1);
      const [letter] = seen.deadLetters;
      expect(letter).toMatchObject({
        reason: 'terminal',
        target: c.target,
        attempts: 1,
        terminal: { kind: c.kind, field: c.field },
      });
      expect(letter.terminal?.message).toMatch(/\S/);
      expect(letter.deadLetterQueueArn).toMatch(new RegExp(`-${c.target}-dlq$`));
    });
  }

  it('a reconcile request for a registered cluster whose access the policy refuses at load (an exec kubeconfig by path): 1 attempt, 1 log line naming the field, 1 dead letter saying access-refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ps-refused-'));
    try {
      const path = join(dir, 'exec.kubeconfig');
      await writeFile(
        path,
        [
          'apiVersion: v1',
          'kind: Config',
          'current-context: c',
          'clusters:',
          '- name: c',
          '  cluster:',
          '    server: http://127.0.0.1:1',
          'contexts:',
          '- name: c',
          '  context:',
          '    cluster: c',
          '    user: u',
          'users:',
          '- name: u',
          '  user:',
          '    exec:',
          '      apiVersion: client.authentication.k8s.io/v1',
          '      command: /bin/sh',
          '      args: ["-c", "echo s3cr3t-exec-arg"]',
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      // Written past the CLI (which refuses it): only the function's own load can refuse it.
      await registerCluster(
        world.table,
        { id: REFUSED, access: { kind: 'kubeconfig-file', path }, labels: { environment: 'e2e' } },
        new Date(),
      );
      const seen = await deliver(
        reconcileRequest({ clusterId: REFUSED, nodePool: 'pool-a', reason: 'e2e', requestedBy: 'e2e' }),
      );
      timings['a cluster whose access the policy refuses'] = Math.round(seen.msToDeadLetter);
      expect(seen.attempts, 'attempts').toBe(1);
      expect(seen.linesNaming('"field":"users[0].user.exec"'), 'log lines naming the field').toHaveLength(1);
      expect(seen.deadLetters, 'dead letters').toHaveLength(1);
      const [letter] = seen.deadLetters;
      expect(letter).toMatchObject({
        reason: 'terminal',
        target: 'reconcile',
        attempts: 1,
        terminal: { kind: 'access-refused', field: 'users[0].user.exec' },
      });
      expect(letter.terminal?.message).toMatch(/exec credential plugins are refused/);
      // The refusal names the field, never a value or the path of the file.
      expect(JSON.stringify(letter.terminal)).not.toMatch(/s3cr3t-exec-arg|\/bin\/sh|exec\.kubeconfig/);
    } finally {
      await deregisterCluster(world.table, REFUSED);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an unknown detail-type is not routed by the rules at all: no attempt, no dead letter', async () => {
    const before = {
      matched: bus.stats().eventsMatched,
      unmatched: bus.stats().eventsUnmatched,
      letters: bus.deadLetters().length,
    };
    const id = putOnStackBus(RECONCILER_SOURCE, 'Reconcile Requets', {
      clusterId: CLUSTER_ID,
      nodePool: 'pool-a',
      reason: 'e2e',
      requestedBy: 'e2e',
    });
    await bus.drain();
    expect(attempts.get(id) ?? 0).toBe(0);
    expect(bus.stats().eventsUnmatched - before.unmatched).toBe(1);
    expect(bus.stats().eventsMatched - before.matched).toBe(0);
    expect(bus.deadLetters().length - before.letters).toBe(0);
  });

  it('leaves no table item without a TTL, and none at all for the unregistered cluster', async () => {
    const items = await tableItems();
    const withoutTtl = items
      .filter((i) => i.pk !== keys.cluster(CLUSTER_ID).pk && i[TTL_ATTRIBUTE] === undefined)
      .map((i) => `${i.pk}/${i.sk}`);
    expect(withoutTtl).toEqual([]);
    expect(items.filter((i) => JSON.stringify(i).includes(UNREGISTERED)).map((i) => `${i.pk}/${i.sk}`)).toEqual([]);
  });

  it('control: a cluster API answering 500 is retried, the failing pool keeps a TTL, and it converges once the API recovers', async () => {
    const pool = 'pool-control';
    await world.createNodePool(pool, { type: 'Edge' });
    const lettersBefore = bus.deadLetters().length;
    const local = world.local;
    if (!local) throw new Error('the control test needs the local API (injected faults)');
    local.setFaults({ seed: 1, rules: [{ errorRate: 1, errorStatus: 500 }] });
    let id = '';
    try {
      id = reconcileRequest({ clusterId: CLUSTER_ID, nodePool: pool, reason: 'e2e', requestedBy: 'e2e' })();
      await waitFor(() => (attempts.get(id) ?? 0) >= 3, 20_000, 'a third attempt of the failing reconcile');
      const failing = await readPoolState(world.table, CLUSTER_ID, pool);
      expect(failing?.outcome).toBe('error');
      const item = (await tableItems()).find((i) => i.sk === keys.pool(CLUSTER_ID, pool).sk);
      expect(item?.[TTL_ATTRIBUTE], 'a pool that never converged expires').toEqual(expect.any(Number));
    } finally {
      local.setFaults({ rules: [] });
    }
    await bus.drain();
    expect(attempts.get(id)).toBeGreaterThanOrEqual(3);
    expect(bus.deadLetters().length - lettersBefore, 'no dead letter for a transient failure that recovered').toBe(0);
    const state = await readPoolState(world.table, CLUSTER_ID, pool);
    expect(state?.outcome).toBe('applied');
    const item = (await tableItems()).find((i) => i.sk === keys.pool(CLUSTER_ID, pool).sk);
    expect(item?.[TTL_ATTRIBUTE], 'a converged pool is kept').toBeUndefined();
  }, 60_000);
});
