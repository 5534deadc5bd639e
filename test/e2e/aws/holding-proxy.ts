/**
 * A slow dependency the test controls: an HTTP proxy in front of a real server (the local apiserver, the
 * local DynamoDB) that records every request with the time it arrived, and holds the requests a predicate
 * picks until the test releases them. A held request whose client went away meanwhile is never forwarded.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  /** Epoch ms when the request's body had arrived. */
  at: number;
  method: string;
  path: string;
  /** DynamoDB's operation (`DynamoDB_20120810.PutItem`), when the request is one. */
  target?: string;
  body: string;
  held: boolean;
  /** For a held request: its client closed the connection before the release. */
  clientGone?: boolean;
  /** For a held request: epoch ms when its client closed the connection. */
  clientGoneAt?: number;
  released?: boolean;
}

export interface HoldingProxy {
  url: string;
  seen: SeenRequest[];
  /** Holds every later request `pick` returns true for, until `release()`. */
  hold(pick: (r: SeenRequest) => boolean): void;
  /** Lets the held requests through (those whose client is still there) and stops holding. */
  release(): void;
  stop(): Promise<void>;
}

const DYNAMO_WRITES = /\.(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)$/;

/** Whether a request writes: a DynamoDB write operation, or any apiserver request but a read. */
export function isWrite(r: SeenRequest): boolean {
  if (r.target) return DYNAMO_WRITES.test(r.target);
  return r.method !== 'GET' && r.method !== 'HEAD';
}

export async function startHoldingProxy(upstream: string): Promise<HoldingProxy> {
  const target = new URL(upstream);
  const seen: SeenRequest[] = [];
  let pick: ((r: SeenRequest) => boolean) | undefined;
  let waiting: Array<() => void> = [];

  const forward = (req: IncomingMessage, body: Buffer, res: import('node:http').ServerResponse) => {
    const out = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = req.headers['x-amz-target'];
      const r: SeenRequest = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        ...(typeof target === 'string' ? { target } : {}),
        body: body.toString('utf8'),
        held: false,
      };
      seen.push(r);
      if (!pick?.(r)) return forward(req, body, res);
      r.held = true;
      res.on('close', () => {
        if (res.writableFinished || r.clientGone) return;
        r.clientGone = true;
        r.clientGoneAt = Date.now();
      });
      waiting.push(() => {
        r.released = true;
        if (!r.clientGone) forward(req, body, res);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    hold(p) {
      pick = p;
    },
    release() {
      pick = undefined;
      const now = waiting;
      waiting = [];
      for (const go of now) go();
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
