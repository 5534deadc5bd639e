/**
 * JSON over node:http(s) to one apiserver: one keep-alive agent per transport, bearer or client-certificate
 * auth, abort by signal. No exec credential plugins: nothing here runs a command.
 */
import type { Agent, ClientRequest } from 'node:http';
import type { ClusterConnection } from './connection.ts';
import { KubeApiError } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /**
   * `ignored`: the caller never reads a successful answer, so it is drained, not decoded, and the request
   * resolves to undefined (a status write whose answer repeats the whole object). Errors are decoded as ever.
   */
  answer?: 'json' | 'ignored';
  /**
   * `absent`: a 404 resolves to undefined instead of rejecting, for a read of an object that may not exist.
   * A new pool's first pass reads nine such objects; an error built for each (its Status parsed, its stack
   * captured) and thrown through the retry policy only to be caught as "absent" was ~1% of its thread's CPU.
   */
  notFound?: 'error' | 'absent';
}

export interface KubeTransport {
  readonly server: string;
  /** JSON in, JSON out. Non-2xx → KubeApiError (a 404 → undefined with `notFound: 'absent'`). Transport failures reject with the node error (its `code` e.g. ECONNRESET). */
  request<T = unknown>(req: KubeRequest): Promise<T>;
  /** Counts of requests sent, by method: for tests and metrics. */
  readonly sent: { total: number } & Partial<Record<HttpMethod, number>>;
  close(): void;
}

export interface KubeTransportOptions {
  userAgent?: string;
}

// Not `import http from 'node:http'`: an ES import of node:http evaluates every export of it, and its
// WebSocket getters load Node's bundled undici (~25 ms of a Lambda cold start) that no request here uses.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

const DEFAULT_USER_AGENT = 'pool-spirit-kube-http';

interface ClientCert {
  certPem: string;
  keyPem: string;
}

/** The agent in use; an agent replaced by a new client certificate is destroyed once its requests end. */
class AgentSlot {
  private readonly connection: ClusterConnection;
  private readonly secure: boolean;
  private current?: { agent: Agent; cert?: ClientCert; inFlight: number };
  private readonly retired = new Set<{ agent: Agent; inFlight: number }>();

  constructor(connection: ClusterConnection, secure: boolean) {
    this.connection = connection;
    this.secure = secure;
  }

  acquire(cert: ClientCert | undefined): { agent: Agent; release(): void } {
    let slot = this.current;
    if (!slot || slot.cert?.certPem !== cert?.certPem || slot.cert?.keyPem !== cert?.keyPem) {
      if (slot) this.retire(slot);
      slot = { agent: this.build(cert), cert, inFlight: 0 };
      this.current = slot;
    }
    slot.inFlight++;
    let released = false;
    return {
      agent: slot.agent,
      release: () => {
        if (released) return;
        released = true;
        slot.inFlight--;
        if (this.retired.has(slot) && slot.inFlight === 0) this.retire(slot);
      },
    };
  }

  close(): void {
    this.current?.agent.destroy();
    this.current = undefined;
    for (const r of this.retired) r.agent.destroy();
    this.retired.clear();
  }

  private retire(slot: { agent: Agent; inFlight: number }): void {
    if (slot.inFlight > 0) {
      this.retired.add(slot);
      return;
    }
    this.retired.delete(slot);
    slot.agent.destroy();
  }

  private build(cert: ClientCert | undefined): Agent {
    if (!this.secure) return new http.Agent({ keepAlive: true });
    const c = this.connection;
    return new https.Agent({
      keepAlive: true,
      ca: c.caPem,
      cert: cert?.certPem,
      key: cert?.keyPem,
      servername: c.tlsServerName,
      rejectUnauthorized: !c.insecureSkipTlsVerify,
    });
  }
}

export function createKubeTransport(connection: ClusterConnection, options: KubeTransportOptions = {}): KubeTransport {
  let base: URL;
  try {
    base = new URL(connection.server);
  } catch {
    base = new URL('invalid:');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new Error('server: expected an http(s) URL');
  const secure = base.protocol === 'https:';
  const prefix = base.pathname.replace(/\/+$/, '');
  const hostname = base.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = base.port || (secure ? 443 : 80);
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const staticCert =
    connection.clientCertPem && connection.clientKeyPem
      ? { certPem: connection.clientCertPem, keyPem: connection.clientKeyPem }
      : undefined;
  const agents = new AgentSlot(connection, secure);
  const sent: KubeTransport['sent'] = { total: 0 };

  async function request<T>(req: KubeRequest): Promise<T> {
    if (!req.path.startsWith('/'))
      throw new Error(
        `path: expected an absolute API path starting with "/", got ${JSON.stringify(req.path.slice(0, 100))}`,
      );
    req.signal?.throwIfAborted();
    const token = connection.token;
    const cert = staticCert;
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const headers: Record<string, string | number> = { Accept: 'application/json', 'User-Agent': userAgent };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (payload)
      Object.assign(headers, {
        'Content-Type': req.contentType ?? 'application/json',
        'Content-Length': payload.length,
      });
    const { status, contentType, text } = await send(req, headers, payload, cert);
    if (status === 404 && req.notFound === 'absent') return undefined as T;
    if (status < 200 || status > 299) {
      throw new KubeApiError(req.method, req.path, status, text);
    }
    if (req.answer === 'ignored') return undefined as T;
    if (!text.trim()) return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(
        `${req.method} ${req.path}: expected a JSON response, got ${contentType || 'no content-type'}: ${JSON.stringify(text.slice(0, 200))}`,
      );
    }
  }

  function send(
    req: KubeRequest,
    headers: Record<string, string | number>,
    payload: Buffer | undefined,
    cert: ClientCert | undefined,
  ) {
    return new Promise<{ status: number; contentType: string; text: string }>((resolve, reject) => {
      const lease = agents.acquire(cert);
      const signal = req.signal;
      const onAbort = () => {
        r.destroy();
        fail(signal?.reason);
      };
      const finish = () => {
        lease.release();
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (err: unknown) => {
        finish();
        reject(err);
      };
      let r: ClientRequest;
      try {
        r = (secure ? https : http).request(
          {
            hostname,
            port,
            method: req.method,
            path: prefix + req.path + queryString(req.query),
            headers,
            agent: lease.agent,
          },
          (res) => {
            const status = res.statusCode ?? 0;
            if (req.answer === 'ignored' && status >= 200 && status <= 299) {
              res.on('error', fail);
              res.on('end', () => {
                finish();
                resolve({ status, contentType: '', text: '' });
              });
              res.resume();
              return;
            }
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', fail);
            res.on('end', () => {
              finish();
              resolve({
                status,
                contentType: String(res.headers['content-type'] ?? ''),
                text: Buffer.concat(chunks).toString('utf8'),
              });
            });
          },
        );
      } catch (err) {
        // e.g. a path with unescaped characters: node throws before anything is sent.
        return fail(err);
      }
      r.on('error', fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      sent.total++;
      sent[req.method] = (sent[req.method] ?? 0) + 1;
      r.end(payload);
    });
  }

  return { server: connection.server, request, sent, close: () => agents.close() };
}

function queryString(query: KubeRequest['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}
