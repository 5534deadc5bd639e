/**
 * The etcd proxy's command line (`agent etcd-proxy --listen-url … `), rendered by
 * core/yurt-coordinator/etcd-proxy.ts etcdProxyContainer.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { LOG_LEVELS, type Logger, type LogLevel } from '../log.ts';
import { UsageError } from '../options.ts';

export interface EtcdProxyOptions {
  /** Where hubs connect, e.g. `https://0.0.0.0:12382`. */
  listenUrl: string;
  /** etcd's client URL, e.g. `https://127.0.0.1:12379`. */
  etcdEndpoint: string;
  /** The proxy's certificate and key: its serving identity towards hubs and its client identity towards etcd. */
  certFile: string;
  keyFile: string;
  /** CA bundle a hub's client certificate must chain to. */
  trustedCaFile: string;
  /** CA that verifies etcd's serving certificate. */
  etcdCaFile: string;
  /**
   * A key prefix the proxy's identity must be refused (a range read of it): proof that etcd auth is on and
   * bounds the proxy's role. Nothing is served while etcd would answer it.
   */
  refusedPrefix: string;
  /** How often the proof is retried before the proxy first listens. Default 250 ms. */
  retryMs?: number;
  logger?: Logger;
  logLevel?: LogLevel;
}

const https = z.string().regex(/^https:\/\/[^/\s]+:\d+$/, { error: 'must be https://HOST:PORT' });
const name = z.string().min(1, { error: 'must not be empty' });

const FlagsSchema = z.strictObject({
  'listen-url': https,
  'etcd-endpoint': https,
  'cert-file': name,
  'key-file': name,
  'trusted-ca-file': name,
  'etcd-ca-file': name,
  'refused-prefix': z.string().startsWith('/', { error: 'must start with /' }),
  'log-level': z.enum(LOG_LEVELS).optional(),
});
const FLAG_NAMES = Object.keys(FlagsSchema.shape) as (keyof typeof FlagsSchema.shape)[];

export const PROXY_USAGE = `usage: agent etcd-proxy --listen-url URL --etcd-endpoint URL --cert-file F --key-file F
                          --trusted-ca-file F --etcd-ca-file F --refused-prefix P [--log-level L]
  --listen-url https://HOST:PORT     where hubs connect (TLS, client certificate required)
  --etcd-endpoint https://HOST:PORT  etcd's client URL
  --cert-file/--key-file F           the proxy's certificate: served to hubs, presented to etcd
  --trusted-ca-file F                CAs a hub's client certificate must chain to
  --etcd-ca-file F                   CA of etcd's serving certificate
  --refused-prefix P                 nothing is served until etcd refuses the proxy a read of this prefix
  --log-level L                      debug, info, warn, error or silent (default info)`;

export function parseEtcdProxyArgs(argv: readonly string[]): EtcdProxyOptions {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: Object.fromEntries(FLAG_NAMES.map((f) => [f, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${PROXY_USAGE}`);
  }
  const parsed = FlagsSchema.safeParse(values);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const flag = String(issue.path[0] ?? '');
      return values[flag] === undefined ? `--${flag} is required` : `--${flag} ${issue.message}`;
    });
    throw new UsageError(`${lines.join('\n')}\n${PROXY_USAGE}`);
  }
  const f = parsed.data;
  return {
    listenUrl: f['listen-url'],
    etcdEndpoint: f['etcd-endpoint'],
    certFile: f['cert-file'],
    keyFile: f['key-file'],
    trustedCaFile: f['trusted-ca-file'],
    etcdCaFile: f['etcd-ca-file'],
    refusedPrefix: f['refused-prefix'],
    logLevel: f['log-level'],
  };
}

/** `https://host:port` → its parts; IPv6 hosts come bracketed in URLs and bare for sockets. */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port) };
}
