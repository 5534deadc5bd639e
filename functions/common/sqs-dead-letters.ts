/**
 * The dead-letter sink on SQS: one `SendMessage` (JSON protocol, SigV4-signed) to the function's own queue.
 * The request goes to the queue URL's own origin, so the same code sends to SQS in the cloud and to the
 * local bus's dead-letter endpoint locally.
 *
 * Why not `@aws-sdk/client-sqs`: it is not a dependency; the signer (`@smithy/signature-v4`, already used
 * for EKS tokens) and one POST are all a SendMessage needs. The role already grants `sqs:SendMessage` on
 * exactly this queue (Lambda's on-failure destination uses the same grant).
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { parseBoundedJson } from '../../shared/bounded-json.ts';
import type { DeadLetterSink, TerminalDeadLetter } from './dead-letters.ts';
import { deadLetterMessage } from './dead-letters.ts';

export const SQS_JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
export const SQS_SEND_MESSAGE_TARGET = 'AmazonSQS.SendMessage';

export interface SqsDeadLetterOptions {
  queueUrl: string;
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Signing region; default: the region in an AWS queue URL's host (`sqs.<region>.amazonaws.com`). */
  region?: string;
  timeoutMs?: number;
}

export class DeadLetterSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadLetterSendError';
  }
}

export function sqsDeadLetterSink(options: SqsDeadLetterOptions): DeadLetterSink {
  const url = new URL(options.queueUrl);
  const region = options.region ?? /^sqs[.-]([a-z0-9-]+)\.amazonaws\.com/.exec(url.hostname)?.[1];
  if (!region) throw new TypeError(`dead-letter queue ${options.queueUrl}: cannot tell its region; pass one`);
  const signer = new SignatureV4({ credentials: options.credentials, region, service: 'sqs', sha256: Sha256 });
  return {
    async send(letter: TerminalDeadLetter): Promise<void> {
      const message = deadLetterMessage(letter);
      const body = JSON.stringify({
        QueueUrl: options.queueUrl,
        MessageBody: message.body,
        MessageAttributes: message.attributes,
      });
      const request = new HttpRequest({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port ? Number(url.port) : undefined,
        path: '/',
        headers: { host: url.host, 'content-type': SQS_JSON_CONTENT_TYPE, 'x-amz-target': SQS_SEND_MESSAGE_TARGET },
        body,
      });
      const signed = await signer.sign(request);
      // fetch sets Host itself (from the URL, the value signed above).
      const { host: _host, ...headers } = signed.headers;
      const res = await fetch(`${url.origin}/`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      });
      if (res.ok) return;
      // The error's type and message only: the request (and so the event) is never echoed.
      const text = (await res.text()).slice(0, 4096);
      let type = `HTTP ${res.status}`;
      try {
        const parsed = parseBoundedJson(text, { maxDepth: 4 }) as { __type?: unknown; message?: unknown };
        if (typeof parsed.__type === 'string') type = `${parsed.__type} (HTTP ${res.status})`;
      } catch {
        // not JSON: the status says enough
      }
      throw new DeadLetterSendError(`could not send the dead letter to ${url.pathname}: ${type}`);
    },
  };
}

/** The function's own dead-letter queue (DEAD_LETTER_QUEUE_URL), written with the execution role's credentials. */
export function cloudDeadLetters(env: NodeJS.ProcessEnv, credentials: AwsCredentialIdentityProvider): DeadLetterSink {
  const queueUrl = env.DEAD_LETTER_QUEUE_URL;
  if (!queueUrl)
    throw new Error("DEAD_LETTER_QUEUE_URL is not set: expected the URL of the function's dead-letter queue");
  return sqsDeadLetterSink({ queueUrl, credentials, region: env.AWS_REGION });
}
