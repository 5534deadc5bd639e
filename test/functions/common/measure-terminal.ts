/**
 * Before/after figures of decision 0003, for any checkout of this repository:
 *   node test/functions/common/measure-terminal.ts <repo root>
 * Runs the local bus with that checkout's serverless.yml rules and the local stack's backoff (200 ms, cap
 * 5 s), dynalite and its real reconcile handler, and sends a schema-invalid Reconcile Request and two for
 * unregistered clusters. Prints per input: attempts, seconds until the dead letter, the dead letter's
 * reason, log lines naming the field, and the table items without a TTL. A checkout without the dead-letter
 * sink (before) simply runs without one. Not a test: it takes about a minute per input before the change.
 */
import { join } from 'node:path';

const root = process.argv[2] ?? join(import.meta.dirname, '..', '..', '..');
const imp = (p: string) => import(join(root, p));
const { startLocalBus } = await imp('dev/local/bus/index.ts');
const { loadRules } = await imp('dev/local/bus/rules-from-serverless.ts');
const { ensureTable, startLocalDynamo } = await imp('dev/local/dynamodb.ts');
const { createStateTable, registerCluster } = await imp('adapters/state-table/index.ts');
const { createReconcileHandler } = await imp('functions/reconcile/handler.ts');
const { Logger } = await import(join(root, 'node_modules/@aws-lambda-powertools/logger/lib/esm/index.js'));
const { Metrics } = await import(join(root, 'node_modules/@aws-lambda-powertools/metrics/lib/esm/index.js'));
const { ScanCommand } = await import(join(root, 'node_modules/@aws-sdk/lib-dynamodb/dist-cjs/index.js'));
let sinkFor: ((url: string) => unknown) | undefined;
try {
  const { sqsDeadLetterSink } = await imp('functions/common/sqs-dead-letters.ts');
  sinkFor = (queueUrl) =>
    sqsDeadLetterSink({ queueUrl, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
} catch {
  /* before: no dead-letter sink */
}

const dynamo = await startLocalDynamo();
await ensureTable(dynamo.client, 'measure-table');
const table = createStateTable({ client: dynamo.client, tableName: 'measure-table' });
await registerCluster(table, { id: 'c1', access: { kind: 'url', url: 'https://127.0.0.1:9' } }, new Date());
const lines: string[] = [];
const logger = new Logger({ serviceName: 'm', logLevel: 'INFO' });
const keep = (l: string) => void lines.push(l);
Object.assign(logger, { console: { info: keep, warn: keep, error: keep, debug: keep, log: keep, trace: keep } });
const metrics = new Metrics({
  namespace: 'M',
  serviceName: 'm',
  logger: { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} },
});
Object.assign(metrics, { console: { log() {} } });
const rules = loadRules(join(root, 'serverless.yml'));
const bus: any = await startLocalBus({
  rules,
  // The local stack's retry settings (npm start): 200 ms first step, 5 s cap.
  retry: { baseDelayMs: 200, maxDelayMs: 5000 },
  // Only reconcile is measured; the others' schedules must not be mistaken for it.
  targets: {
    ...Object.fromEntries(['audit', 'probe', 'cloudEvents', 'rollout'].map((n) => [n, async () => undefined])),
    reconcile: (e: any) => {
      perEvent.set(e.id, (perEvent.get(e.id) ?? 0) + 1);
      return handler(e, { awsRequestId: crypto.randomUUID() });
    },
  },
});
let handler: any;
const perEvent = new Map<string, number>();
handler = createReconcileHandler({
  table,
  logger,
  metrics,
  deadLetters: sinkFor?.(bus.deadLetterQueueUrl('reconcile')),
});
const busName = rules.find((r: any) => r.target === 'reconcile' && r.pattern).eventBus;
const cases: [string, string, Record<string, unknown>][] = [
  ['schema-invalid detail (no nodePool)', 'detail.nodePool', { clusterId: 'c1', reason: 'm', requestedBy: 'm' }],
  [
    'unregistered cluster',
    'detail.clusterId',
    { clusterId: 'nobody', nodePool: 'pool-a', reason: 'm', requestedBy: 'm' },
  ],
  [
    'second unregistered cluster',
    'detail.clusterId',
    { clusterId: 'nobody-2', nodePool: 'pool-b', reason: 'm', requestedBy: 'm' },
  ],
];
for (const [what, field, detail] of cases) {
  const before = { attempts: bus.stats().attempts, letters: bus.deadLetters().length, lines: lines.length };
  const t0 = performance.now();
  const id = bus.putEvents([
    {
      Source: 'pool-spirit.reconciler',
      DetailType: 'Reconcile Request',
      Detail: JSON.stringify(detail),
      EventBusName: busName,
    },
  ]).Entries[0].EventId;
  while (!bus.deadLetters().some((d: any) => d.eventId === id)) await new Promise((r) => setTimeout(r, 10));
  const s = ((performance.now() - t0) / 1000).toFixed(2);
  const items = ((await table.doc.send(new ScanCommand({ TableName: 'measure-table' }))).Items ?? []).filter(
    (i: any) => i.pk !== 'REGISTRY' && i.expiresAt === undefined,
  );
  const letter = bus.deadLetters().find((d: any) => d.eventId === id);
  console.log(
    JSON.stringify({
      what,
      attempts: perEvent.get(id),
      secondsToDeadLetter: Number(s),
      deadLetter: letter && { reason: letter.reason, terminal: letter.terminal, attempts: letter.attempts },
      logLinesNamingField: lines.slice(before.lines).filter((l) => l.includes(field)).length,
      tableItemsWithoutTtl: items.map((i: any) => `${i.pk}/${i.sk}`),
    }),
  );
}
await bus.stop();
await dynamo.stop();
