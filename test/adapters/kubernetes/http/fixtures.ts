/** Test servers for the kube-http transport: a JSON echo server on http or https (with client-cert capture). */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  type CertAndKey,
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
} from '../../../../dev/local/pki.ts';

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  clientCn?: string;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;

export interface TestServer {
  url: string;
  seen: Seen[];
  /** TCP connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** Replies 200 with `{ ok: true, seen }` unless `handler` answers. */
export async function startServer(
  opts: { tls?: { serving: CertAndKey; clientCa?: string }; handler?: Handler } = {},
): Promise<TestServer> {
  const seen: Seen[] = [];
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sock = req.socket as TLSSocket;
      const peer = opts.tls && sock.authorized ? sock.getPeerCertificate() : undefined;
      const s: Seen = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        clientCn: peer?.subject?.CN as string | undefined,
      };
      seen.push(s);
      if (opts.handler) return opts.handler(req, res, s);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, seen: { method: s.method, url: s.url, clientCn: s.clientCn } }));
    });
  };
  const server = opts.tls
    ? https.createServer(
        {
          cert: opts.tls.serving.certPem,
          key: opts.tls.serving.keyPem,
          ca: opts.tls.clientCa,
          requestCert: !!opts.tls.clientCa,
          rejectUnauthorized: false,
        },
        listener,
      )
    : http.createServer(listener);
  const state = { connections: 0 };
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    seen,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Pki {
  ca: CertificateAuthority;
  otherCa: CertificateAuthority;
  serving: CertAndKey;
  client: CertAndKey;
}

export async function makePki(): Promise<Pki> {
  const [ca, otherCa] = await Promise.all([
    createCertificateAuthority('kube-http-test-ca'),
    createCertificateAuthority('kube-http-other-ca'),
  ]);
  const [serving, client] = await Promise.all([
    issueServingCertificate(ca),
    issueClientCertificate(ca, { user: 'alice', groups: ['system:masters'] }),
  ]);
  return { ca, otherCa, serving, client };
}
