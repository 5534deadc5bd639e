import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterAll, describe, expect, it } from 'vitest';
import { compilePattern } from '../../../../dev/local/bus/pattern.ts';
import { loadRules, ServerlessRulesError } from '../../../../dev/local/bus/rules-from-serverless.ts';
import { startLocalBus } from '../../../../dev/local/bus/server.ts';
import type { Rule } from '../../../../dev/local/bus/types.ts';
import {
  changeNoticeDetailSchema,
  changeNoticeEventSchema,
  changeNoticeRouting,
  DETAIL_TYPES,
  EVENT_SOURCES,
  parseEvent,
  toPutEventsEntry,
} from '../../../../events/index.ts';

const FIXTURE = resolve(import.meta.dirname, 'fixtures/serverless.yml');
const REAL = resolve(import.meta.dirname, '../../../../serverless.yml');

const tmp = mkdtempSync(join(tmpdir(), 'sls-rules-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes a variant of the fixture with one substitution, for the error cases. */
function variant(from: string, to: string): string {
  const text = readFileSync(FIXTURE, 'utf8');
  if (!text.includes(from)) throw new Error(`fixture does not contain ${from}`);
  const file = join(tmp, `serverless-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, text.replace(from, to));
  return file;
}

/** Source and detail-type literals a pattern names, so they can be checked against events/. */
function literals(pattern: unknown, field: 'source' | 'detail-type'): string[] {
  const values = (pattern as Record<string, unknown> | undefined)?.[field]; // schedule rules have no pattern
  return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
}

function expectLiteralsMatchContracts(rules: Rule[]) {
  const sources = new Set<string>(Object.values(EVENT_SOURCES));
  const detailTypes = new Set<string>(Object.values(DETAIL_TYPES));
  for (const rule of rules) {
    if (!rule.pattern) continue;
    for (const source of literals(rule.pattern, 'source').filter((s) => s.startsWith('pool-spirit.'))) {
      expect(sources, `${rule.name}: source ${source}`).toContain(source);
      for (const dt of literals(rule.pattern, 'detail-type'))
        expect(detailTypes, `${rule.name}: detail-type ${dt}`).toContain(dt);
    }
  }
}

describe('loadRules: fixture in osls syntax', () => {
  const rules = loadRules(FIXTURE);
  const byName = Object.fromEntries(rules.map((r) => [r.name, r]));

  it('reads eventBridge patterns with variables, CloudFormation references, retry policy and DLQ', () => {
    expect(byName['reconcile-rule-1']).toEqual({
      name: 'reconcile-rule-1',
      eventBus: 'bus-fixture-dev',
      pattern: {
        source: ['pool-spirit.forwarder'],
        'detail-type': ['Cluster Change Notice'],
        detail: { poolName: [{ exists: true }], changeType: [{ 'anything-but': 'RESYNC' }] },
      },
      target: 'reconcile',
      retryPolicy: { maximumRetryAttempts: 10, maximumEventAgeInSeconds: 3600 },
      deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:000000000000:bus-fixture-dev-dlq',
    });
    expect(byName['reconcile-rule-2']).toMatchObject({
      eventBus: 'bus-fixture-dev',
      inputPath: '$.detail',
      target: 'reconcile',
    });
    expect(byName['spot-rule-1']).toMatchObject({
      eventBus: 'default',
      retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 60 },
    });
  });

  it('reads schedules in string, list and eventBridge forms, with inputs', () => {
    expect(byName['audit-schedule-1']).toMatchObject({
      schedule: 'rate(15 minutes)',
      target: 'audit',
      eventBus: 'default',
    });
    expect(byName['audit-schedule-2-1']).toMatchObject({
      schedule: 'cron(0 3 * * ? *)',
      input: { scope: 'fleet' },
      enabled: true,
    });
    expect(byName['audit-schedule-2-2']).toMatchObject({ schedule: 'rate(1 hour)', input: { scope: 'fleet' } });
    expect(byName['audit-schedule-3']).toMatchObject({ schedule: 'rate(1 day)', input: { scope: 'certificates' } });
    expect(rules.filter((r) => r.target === 'http')).toEqual([]);
  });

  it('resolves stage-dependent values', () => {
    const prod = Object.fromEntries(loadRules(FIXTURE, { stage: 'prod', region: 'us-east-2' }).map((r) => [r.name, r]));
    expect(prod['reconcile-rule-1']).toMatchObject({
      eventBus: 'bus-fixture-prod',
      deadLetterQueueArn: 'arn:aws:sqs:us-east-2:000000000000:bus-fixture-prod-dlq',
    });
    expect(prod['audit-schedule-1'].schedule).toBe('rate(5 minutes)');
  });

  it('uses the events/ constants for every pool-spirit source and detail-type', () => {
    expectLiteralsMatchContracts(rules);
  });

  it.each([
    [
      'an invalid pattern',
      '- anything-but: RESYNC',
      '- anything-but: { numeric: [">", 1] }',
      /functions\.reconcile\.events\[0\]\.eventBridge\.pattern: function reconcile: invalid event pattern at detail\.changeType\[0\]\.anything-but\.numeric/,
    ],
    [
      'a pattern value that is not a list',
      'poolName:\n                - exists: true',
      'poolName: yes',
      /function reconcile: invalid event pattern at detail\.poolName: match values must be in an array/,
    ],
    [
      'a retry count out of range',
      'maximumRetryAttempts: 0',
      'maximumRetryAttempts: 200',
      /functions\.spot\.events\[0\]\.eventBridge\.retryPolicy\.maximumRetryAttempts: must be a whole number from 0 to 185/,
    ],
    [
      'an event age out of range',
      'maximumEventAge: 60',
      'maximumEventAge: 10',
      /retryPolicy\.maximumEventAge: must be a whole number of seconds from 60 to 86400/,
    ],
    [
      'a bad schedule',
      '- rate(1 hour)',
      '- rate(1 hours)',
      /functions\.audit\.events\[1\]\.schedule\.rate\[1\]: function audit: .*singular unit/,
    ],
    [
      'an unresolvable variable',
      `\${self:custom.sources.forwarder}`,
      `\${self:custom.nothing.here}`,
      /functions\.reconcile\.events\[0\]\.eventBridge\.pattern: cannot resolve \$\{self:custom\.nothing\.here\}/,
    ],
    [
      'an unknown event bus reference',
      'eventBus: !GetAtt EventBus.Name',
      'eventBus: !GetAtt Missing.Name',
      /eventBridge\.eventBus: cannot tell which event bus/,
    ],
  ])('rejects %s with an error naming the function and place', (_what, from, to, message) => {
    const file = variant(from, to);
    expect(() => loadRules(file)).toThrow(ServerlessRulesError);
    expect(() => loadRules(file)).toThrow(message);
  });

  it('names the file when it cannot be read or parsed', () => {
    expect(() => loadRules(join(tmp, 'missing.yml'))).toThrow(/missing\.yml: cannot read/);
    const bad = join(tmp, 'bad.yml');
    writeFileSync(bad, 'functions: [\n');
    expect(() => loadRules(bad)).toThrow(/bad\.yml: not valid YAML/);
  });
});

describe('loadRules: the project serverless.yml', () => {
  const rules = loadRules(REAL);

  it('yields valid rules with retry policies and dead-letter queues', () => {
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      if (rule.pattern !== undefined) expect(() => compilePattern(rule.pattern)).not.toThrow();
      expect(rule.retryPolicy, rule.name).toBeDefined();
      expect(rule.deadLetterQueueArn, rule.name).toMatch(/^arn:aws:sqs:/);
    }
  });

  it('uses the events/ constants for every pool-spirit source and detail-type', () => {
    expectLiteralsMatchContracts(rules);
    const routed = rules.flatMap((r) => literals(r.pattern, 'detail-type'));
    expect(routed).toContain(DETAIL_TYPES.changeNotice);
  });

  it('routes a real change notice sent with the AWS SDK to the reconcile function', async () => {
    const targets = Object.fromEntries(
      [...new Set(rules.map((r) => r.target))].map((t) => [
        t,
        async (e: unknown) => void received.push({ target: t, event: e }),
      ]),
    );
    const received: { target: string; event: unknown }[] = [];
    const bus = await startLocalBus({ rules, targets });
    try {
      const eventBus = rules.find((r) => r.target === 'reconcile')!.eventBus!;
      const notice = {
        clusterId: 'edge-1',
        kind: 'NodePool' as const,
        name: 'pool-a',
        uid: '7d6c1a52-0000-4000-8000-000000000001',
        resourceVersion: '42',
        generation: 3,
        changeType: 'MODIFIED' as const,
        poolName: 'pool-a',
        observedAt: '2026-03-04T10:00:00.000Z',
      };
      const client = new EventBridgeClient({
        endpoint: bus.endpoint,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      });
      const out = await client.send(
        new PutEventsCommand({
          Entries: [
            toPutEventsEntry(changeNoticeRouting, changeNoticeDetailSchema, notice, { eventBusName: eventBus }),
            // No poolName: a Node that left every pool is not routed to reconcile.
            toPutEventsEntry(
              changeNoticeRouting,
              changeNoticeDetailSchema,
              { ...notice, kind: 'Node', name: 'n1', poolName: undefined },
              { eventBusName: eventBus },
            ),
          ],
        }),
      );
      expect(out.FailedEntryCount).toBe(0);
      await bus.drain();
      expect(received.map((r) => r.target)).toEqual(['reconcile']);
      const event = parseEvent(changeNoticeEventSchema, received[0].event);
      expect(event.detail).toEqual(notice);
      expect(event.id).toBe(out.Entries![0].EventId);
    } finally {
      await bus.stop();
    }
  });
});
