/**
 * The etcd proxy's command line (`agent etcd-proxy --listen-url … `), rendered by
 * core/yurt-coordinator/etcd-proxy.ts etcdProxyContainer.
 */
import { parseArgs } from 'node:util';
import { LOG_LEVELS, type Logger, type LogLevel } from '../log.ts';
import { UsageError } from '../usage-error.ts';

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
  /** How often the certificate files are checked for renewed content (default 5 s). */
  credentialPollMs?: number;
  logger?: Logger;
  logLevel?: LogLevel;
}

const FLAGS = [
  'listen-url',
  'etcd-endpoint',
  'cert-file',
  'key-file',
  'trusted-ca-file',
  'etcd-ca-file',
  'refused-prefix',
  'log-level',
] as const;
type Flag = (typeof FLAGS)[number];
const HTTPS_HOST_PORT = /^https:\/\/[^/\s]+:\d+$/;

/** Why a flag's value is wrong, or undefined when it is right (checked by hand: the proxy loads no zod). */
function problem(flag: Flag, value: string | undefined): string | undefined {
  if (value === undefined) return flag === 'log-level' ? undefined : 'is required';
  switch (flag) {
    case 'listen-url':
    case 'etcd-endpoint':
      return HTTPS_HOST_PORT.test(value) ? undefined : 'must be https://HOST:PORT';
    case 'refused-prefix':
      return value.startsWith('/') ? undefined : 'must start with /';
    case 'log-level':
      return (LOG_LEVELS as readonly string[]).includes(value) ? undefined : `must be one of ${LOG_LEVELS.join(', ')}`;
    default:
      return value === '' ? 'must not be empty' : undefined;
  }
}

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
      options: Object.fromEntries(FLAGS.map((f) => [f, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${PROXY_USAGE}`);
  }
  const issues = FLAGS.flatMap((flag) => {
    const why = problem(flag, values[flag]);
    return why ? [`--${flag} ${why}`] : [];
  });
  if (issues.length > 0) throw new UsageError(`${issues.join('\n')}\n${PROXY_USAGE}`);
  const f = values as Record<Exclude<Flag, 'log-level'>, string> & { 'log-level'?: LogLevel };
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
