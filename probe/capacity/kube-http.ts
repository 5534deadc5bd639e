/**
 * A minimal JSON client for the Kubernetes API, for load generation: one keep-alive connection pool, no
 * model layer, no retries, raw status codes. The capacity probe measures the apiserver, so the client
 * must add as little of its own latency as it can (client-node builds a new agent per request).
 * Authentication comes from a kubeconfig through client-node (TLS client certificates, bearer tokens,
 * exec plugins), applied once.
 */
import http from 'node:http';
import https from 'node:https';

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
}

export interface KubeHttp {
  /** Base URL of the apiserver (no credentials). */
  readonly server: string;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<KubeResponse<T>>;
  /** Requests sent so far. */
  readonly sent: number;
  close(): void;
}

export interface KubeHttpOptions {
  /** Open connections at most (requests beyond this queue in the agent). */
  maxSockets?: number;
  /** A request that takes longer fails with a timeout. Default 30 s. */
  timeoutMs?: number;
}

interface Transport {
  server: URL;
  tls?: https.AgentOptions;
  headers: Record<string, string>;
}

/** A client for an https apiserver with a client certificate (a pool-spirit, as its agent identity). */
export function kubeHttpForTls(
  url: string,
  tls: { ca: string; cert: Buffer; key: Buffer },
  options: KubeHttpOptions = {},
): KubeHttp {
  const server = new URL(url);
  if (server.protocol !== 'https:')
    throw new TypeError(`apiserver URL: expected https://host:port, got ${JSON.stringify(url)}`);
  return createKubeHttp({ server, tls: { ...tls, rejectUnauthorized: true }, headers: {} }, options);
}

/** A client for the current context of a kubeconfig file (credentials stay in memory, never logged). */
export async function kubeHttpForKubeconfig(
  file: string,
  options: KubeHttpOptions & { context?: string } = {},
): Promise<KubeHttp> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
    if (options.context) kc.setCurrentContext(options.context);
  } catch (err) {
    throw new Error(`kubeconfig ${file}: cannot be loaded (${(err as Error).message.split('\n')[0]})`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new Error(`kubeconfig ${file}: the current context names no cluster server`);
  const opts: https.RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
  const tls: https.AgentOptions = {
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    pfx: opts.pfx,
    passphrase: opts.passphrase,
    rejectUnauthorized: !cluster.skipTLSVerify,
    servername: cluster.tlsServerName,
  };
  return createKubeHttp({ server: new URL(cluster.server), tls, headers }, options);
}

function createKubeHttp(t: Transport, options: KubeHttpOptions): KubeHttp {
  const secure = t.server.protocol === 'https:';
  if (!secure && t.server.protocol !== 'http:')
    throw new TypeError(`apiserver URL must be http or https, got ${t.server.protocol}`);
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64, ...(secure ? t.tls : {}) };
  const agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const base = t.server.pathname.replace(/\/$/, '');
  let sent = 0;

  function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<KubeResponse<T>> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    sent++;
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(
        {
          protocol: t.server.protocol,
          hostname: t.server.hostname,
          port: t.server.port,
          path: base + path,
          method,
          agent,
          signal,
          timeout: timeoutMs,
          headers: {
            ...t.headers,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text ? JSON.parse(text) : {};
            } catch {
              // not JSON (a proxy's error page): keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  return {
    server: t.server.origin,
    request,
    get sent() {
      return sent;
    },
    close() {
      agent.destroy();
    },
  };
}

/** An error for an unexpected answer, with the apiserver's message (never the request body). */
export function unexpected(what: string, res: KubeResponse): Error {
  const message = (res.body as { message?: unknown } | undefined)?.message;
  return new Error(`${what}: HTTP ${res.status}${typeof message === 'string' ? ` (${message.slice(0, 300)})` : ''}`);
}
