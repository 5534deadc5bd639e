/**
 * A recording, fault-injecting HTTP(S) proxy for a Kubernetes API: it sits in front of either backend (the
 * local API or a real kube-apiserver), so one end-to-end test can run on both and still count requests or
 * inject faults. See README.md.
 */
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { listen } from '../kube-api/server/listen.ts';
import {
  describeAction,
  type FaultAction,
  FaultPlan,
  type FaultRule,
  injectedStatus,
  type RequestFacts,
} from './faults.ts';
import { keepableBody } from './redact.ts';
import { type KubeRequestInfo, kubeRequestInfo } from './request-info.ts';

export { type FaultAction, type FaultMatch, type FaultRule, FaultRuleError } from './faults.ts';
export { REDACTED, REDACTED_B64, redactObject } from './redact.ts';
export { type KubeRequestInfo, kubeRequestInfo } from './request-info.ts';

export interface ProxyRecord extends KubeRequestInfo {
  /** Order of arrival, from 0. */
  seq: number;
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
  method: string;
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  contentType?: string;
  accept?: string;
  userAgent?: string;
  fieldManager?: string;
  /** HTTP status sent to the client; 0 when none was (a hang, an unreachable backend). */
  status: number;
  /** Until the response ended (for a watch: until it closed). */
  durationMs: number;
  /** The injected fault, e.g. `status 429`, when a rule hit. */
  fault?: string;
  /** With `captureBodies` only, Secrets redacted (see redact.ts). */
  requestBody?: Buffer;
  responseBody?: Buffer;
  responseContentType?: string;
}

export interface KubeProxyOptions {
  /** The backend, e.g. `https://127.0.0.1:6443`. */
  target: string;
  /** Client identity and trust toward an HTTPS backend (PEM). */
  upstream?: { caPem?: string; certPem?: string; keyPem?: string };
  /** Serve HTTPS with this certificate; plain HTTP otherwise. Always on loopback unless `host` says more. */
  tls?: { certPem: string; keyPem: string };
  host?: string;
  port?: number;
  rules?: FaultRule[];
  /** Keep request and response bodies in the records (Secrets redacted). Default false. */
  captureBodies?: boolean;
  /** Bodies larger than this are cut when captured (default 8 MiB). */
  maxCapturedBytes?: number;
}

export interface KubeProxy {
  url: string;
  /** Every request so far, or since a mark. */
  records(sinceMark?: number): ProxyRecord[];
  mark(): number;
  /** Replaces the fault rules; an empty list turns faults off. */
  setRules(rules: FaultRule[]): void;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
]);

function forwardable(headers: IncomingMessage['headers'], keepChunked = false): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  // Node sends a DELETE body chunked only when told to; without either length header the backend reads none.
  if (keepChunked && headers['transfer-encoding'] === 'chunked') out['transfer-encoding'] = 'chunked';
  return out;
}

class BodyTap {
  private chunks: Buffer[] = [];
  private size = 0;
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  add(chunk: Buffer): void {
    if (this.size >= this.max) return;
    const part = chunk.subarray(0, this.max - this.size);
    this.chunks.push(part);
    this.size += part.length;
  }
  body(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export async function startKubeProxy(opts: KubeProxyOptions): Promise<KubeProxy> {
  const target = new URL(opts.target);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new Error(`target: expected an http(s) URL, got ${opts.target}`);
  const plan = new FaultPlan(opts.rules ?? []);
  const records: ProxyRecord[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const maxCaptured = opts.maxCapturedBytes ?? 8 << 20;
  let seq = 0;

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://proxy');
    const info = kubeRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
    const fieldManager = url.searchParams.get('fieldManager') ?? undefined;
    const facts: RequestFacts = { ...info, path: url.pathname, fieldManager };
    const record: ProxyRecord = {
      ...info,
      seq: seq++,
      at: started,
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search.slice(1),
      ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
      ...(req.headers.accept ? { accept: req.headers.accept } : {}),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      ...(fieldManager ? { fieldManager } : {}),
      status: 0,
      durationMs: 0,
    };
    records.push(record);
    const aboutSecrets = info.resource === 'secrets';
    const requestTap = opts.captureBodies ? new BodyTap(maxCaptured) : undefined;
    const responseTap = opts.captureBodies ? new BodyTap(maxCaptured) : undefined;
    res.on('close', () => {
      record.durationMs = Date.now() - started;
      record.status = res.headersSent ? res.statusCode : 0;
      if (requestTap) {
        const kept = keepableBody(requestTap.body(), aboutSecrets);
        if (kept?.length) record.requestBody = kept;
      }
      if (responseTap) {
        const kept = keepableBody(responseTap.body(), aboutSecrets);
        if (kept?.length) record.responseBody = kept;
      }
    });

    const action = plan.take(facts);
    if (action) record.fault = describeAction(action);
    const forward = (drop?: Extract<FaultAction, { dropWatch: unknown }>['dropWatch']) => {
      const upstream = (target.protocol === 'https:' ? httpsRequest : httpRequest)(
        {
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          method: req.method,
          path: url.pathname + url.search,
          headers: { ...forwardable(req.headers, true), host: target.host },
          ca: opts.upstream?.caPem,
          cert: opts.upstream?.certPem,
          key: opts.upstream?.keyPem,
        },
        (up) => {
          const headers = forwardable(up.headers);
          record.responseContentType = up.headers['content-type'];
          res.writeHead(up.statusCode ?? 502, headers);
          let events = 0;
          const cut = () => {
            up.destroy();
            res.destroy();
          };
          if (drop?.afterMs !== undefined) later(drop.afterMs, cut);
          up.on('data', (chunk: Buffer) => {
            if (drop?.afterEvents === undefined) {
              responseTap?.add(chunk);
              res.write(chunk);
              return;
            }
            // A JSON watch stream has one event per line: pass whole events up to the limit, then cut
            // once they have been flushed to the client.
            let end = 0;
            while (end < chunk.length && events < drop.afterEvents) {
              const nl = chunk.indexOf(0x0a, end);
              if (nl < 0) {
                end = chunk.length;
                break;
              }
              end = nl + 1;
              events++;
            }
            const part = chunk.subarray(0, end);
            responseTap?.add(part);
            if (events >= drop.afterEvents) {
              up.pause();
              res.write(part, cut);
            } else res.write(part);
          });
          up.on('end', () => res.end());
          up.on('error', () => res.destroy());
        },
      );
      upstream.on('error', (err) => {
        if (res.headersSent) return res.destroy();
        res
          .writeHead(502, { 'content-type': 'text/plain' })
          .end(`kube-proxy: backend ${target.host} unreachable: ${err.message}\n`);
      });
      req.on('data', (chunk: Buffer) => requestTap?.add(chunk));
      req.pipe(upstream);
      // A client that goes away (a watch it stops) ends the backend request too.
      res.on('close', () => upstream.destroy());
    };

    if (!action || 'dropWatch' in action)
      return forward(action && 'dropWatch' in action ? action.dropWatch : undefined);
    if ('delayMs' in action) return later(action.delayMs, () => forward());
    if ('hangMs' in action) {
      req.resume();
      return later(action.hangMs, () => req.socket.destroy());
    }
    const err = injectedStatus(action, facts);
    req.on('data', (chunk: Buffer) => requestTap?.add(chunk));
    req.on('end', () => {
      const body = JSON.stringify(err.status());
      responseTap?.add(Buffer.from(body));
      record.responseContentType = 'application/json';
      res.writeHead(err.code, { 'content-type': 'application/json', ...(err.headers ?? {}) }).end(body);
    });
  };

  const server: Server = opts.tls
    ? createHttpsServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, handle)
    : createHttpServer(handle);
  const { url, sockets } = await listen(server, { host: opts.host, port: opts.port, https: Boolean(opts.tls) });

  let stopping: Promise<void> | undefined;
  return {
    url,
    records: (sinceMark = 0) => records.slice(sinceMark),
    mark: () => records.length,
    setRules: (rules) => plan.set(rules),
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      })),
  };
}
