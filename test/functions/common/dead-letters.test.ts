/**
 * The dead-letter sink as the cloud wires it: a SigV4-signed SQS SendMessage to the function's own queue,
 * whose URL serverless.yml gives each function. Checked against the local bus's queue endpoint (what the
 * bus keeps) and against a plain HTTP server (what goes over the wire).
 */

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalBus } from '../../../dev/local/bus/index.ts';
import { startLocalBus } from '../../../dev/local/bus/index.ts';
import { loadRules } from '../../../dev/local/bus/rules-from-serverless.ts';
import { parseServerlessYaml } from '../../../dev/local/bus/serverless-config.ts';
import { parseEvent, reconcileRequestEventSchema } from '../../../events/index.ts';
import { deadLetterMessage, MAX_DEAD_LETTER_BODY_BYTES } from '../../../functions/common/dead-letters.ts';
import { FUNCTION_PERMISSIONS } from '../../../functions/common/permissions.ts';
import { sqsDeadLetterSink } from '../../../functions/common/sqs-dead-letters.ts';
import { terminalReasonOf } from '../../../functions/common/terminal.ts';

const repo = join(import.meta.dirname, '..', '..', '..');
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const event = {
  version: '0',
  id: 'e-1',
  'detail-type': 'Reconcile Request',
  source: 'pool-spirit.reconciler',
  account: '1',
  time: '2026-03-01T08:00:00Z',
  region: 'eu-west-1',
  resources: [],
  detail: { clusterId: 'c1' },
};
const reason = { kind: 'invalid-event' as const, field: 'detail.nodePool', message: 'detail.nodePool: Invalid input' };

let bus: LocalBus;
beforeAll(async () => {
  const rules = loadRules(join(repo, 'serverless.yml'));
  const noop = async () => undefined;
  bus = await startLocalBus({
    rules,
    targets: { reconcile: noop, audit: noop, probe: noop, cloudEvents: noop, rollout: noop },
  });
});
afterAll(async () => {
  await bus?.stop();
});

describe('the dead-letter sink', () => {
  it('every function is given its own queue URL (DEAD_LETTER_QUEUE_URL = !Ref its DLQ)', () => {
    const doc = parseServerlessYaml(readFileSync(join(repo, 'serverless.yml'), 'utf8')) as {
      functions: Record<string, { environment?: Record<string, unknown> }>;
    };
    for (const name of Object.keys(FUNCTION_PERMISSIONS)) {
      const logical = name[0].toUpperCase() + name.slice(1);
      expect(doc.functions[name].environment?.DEAD_LETTER_QUEUE_URL, name).toEqual({
        Ref: `${logical}DeadLetterQueue`,
      });
    }
  });

  it('sends one signed SendMessage whose body is the event and whose attributes carry the reason', async () => {
    const got: { headers: Record<string, unknown>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const queueUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/123456789012/q-dlq`;
      await sqsDeadLetterSink({ queueUrl, credentials, region: 'eu-west-1' }).send({
        functionName: 'reconcile',
        reason,
        event,
        attempts: 1,
        requestId: 'r-1',
      });
      expect(got).toHaveLength(1);
      const [{ headers, body }] = got;
      expect(headers['x-amz-target']).toBe('AmazonSQS.SendMessage');
      expect(headers['content-type']).toBe('application/x-amz-json-1.0');
      expect(String(headers.authorization)).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/sqs\/aws4_request, SignedHeaders=[^ ]*host[^ ]*x-amz-target/,
      );
      expect(body).not.toContain(credentials.secretAccessKey);
      const sent = JSON.parse(body) as {
        QueueUrl: string;
        MessageBody: string;
        MessageAttributes: Record<string, { DataType: string; StringValue: string }>;
      };
      expect(sent.QueueUrl).toBe(queueUrl);
      expect(JSON.parse(sent.MessageBody)).toEqual(event);
      expect(JSON.parse(sent.MessageAttributes.TERMINAL_REASON.StringValue)).toEqual(reason);
      expect(sent.MessageAttributes.ERROR_CODE.StringValue).toBe('TerminalError');
      expect(sent.MessageAttributes.ATTEMPTS).toEqual({ DataType: 'Number', StringValue: '1' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("lands in the local bus's dead-letter store, on the rule of the function that sent it", async () => {
    const url = bus.deadLetterQueueUrl('reconcile');
    expect(url).toMatch(/\/pool-spirit-reconciler-dev-reconcile-dlq$/);
    await sqsDeadLetterSink({ queueUrl: url!, credentials, region: 'local' }).send({
      functionName: 'reconcile',
      reason,
      event,
      attempts: 1,
    });
    const [letter] = bus.deadLetters();
    expect(letter).toMatchObject({
      reason: 'terminal',
      terminal: reason,
      target: 'reconcile',
      attempts: 1,
      eventId: 'e-1',
      event,
    });
    expect(bus.stats().deadLettered).toBe(1);
  });

  it('a queue the bus does not know, or a message without its reason, is refused and the sender throws', async () => {
    const unknown = bus.deadLetterQueueUrl('reconcile')!.replace(/[^/]+$/, 'no-such-dlq');
    await expect(
      sqsDeadLetterSink({ queueUrl: unknown, credentials, region: 'local' }).send({
        functionName: 'reconcile',
        reason,
        event,
        attempts: 1,
      }),
    ).rejects.toThrow(/NonExistentQueue/);
    const res = await fetch(`${bus.endpoint}/`, {
      method: 'POST',
      headers: { 'x-amz-target': 'AmazonSQS.SendMessage', 'content-type': 'application/x-amz-json-1.0' },
      body: JSON.stringify({ QueueUrl: bus.deadLetterQueueUrl('audit'), MessageBody: '{}' }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/TERMINAL_REASON is required/);
  });

  it('keeps an event too large to send whole as its envelope, saying why', () => {
    const huge = { ...event, detail: { blob: 'x'.repeat(MAX_DEAD_LETTER_BODY_BYTES) } };
    const message = deadLetterMessage({ functionName: 'audit', reason, event: huge, attempts: 1 });
    const body = JSON.parse(message.body) as Record<string, unknown>;
    expect(body).toMatchObject({ id: 'e-1', 'detail-type': 'Reconcile Request', source: 'pool-spirit.reconciler' });
    expect(body.detail).toBeUndefined();
    expect(body.eventOmitted).toMatch(/over \d+ bytes/);
  });

  it('an event nested past the bound is refused naming the path to the deep part', () => {
    let deep: Record<string, unknown> = { end: true };
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const err = (() => {
      try {
        parseEvent(reconcileRequestEventSchema, { ...event, detail: { clusterId: 'c1', nodePool: deep } });
      } catch (e) {
        return e;
      }
    })();
    expect(terminalReasonOf(err)).toMatchObject({
      kind: 'invalid-event',
      field: expect.stringMatching(/^detail\.nodePool\.a/),
    });
    expect(terminalReasonOf(err)?.message).toMatch(/nested deeper than 65 levels/);
  });
});
