/**
 * The agent's options: the programmatic shape (startAgent) and the command line that maps onto it.
 * Flags the rendered container passes (core/render/containers.ts agentContainer): --kubeconfig, --pool,
 * --poolspirit, --namespace, --bootstrap-configmap, --etcd-health-url; the rest come from
 * spec.agent.extraArgs or the defaults below. Names also fall back to the container's env.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { DEFAULT_ETCD_STORAGE } from '../core/poolspirit/defaults.ts';
import { isQuantity, quantityBytes } from '../core/quantity.ts';
import { DEFAULT_DEFRAG_POLICY, type DefragPolicy } from './decide/etcd.ts';
import type { EtcdAuthSpec } from './decide/etcd-auth.ts';
import { LOG_LEVELS, type Logger, type LogLevel } from './log.ts';
import { UsageError } from './usage-error.ts';

export interface EtcdConnection {
  /** Client URLs, e.g. `https://127.0.0.1:12379`. */
  endpoints: string[];
  /** PEM files for an etcd that requires TLS client certificates. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export interface AgentOptions {
  /** Path of the admin kubeconfig for the pool-spirit's own apiserver. */
  kubeconfig: string;
  /** Path of a kubeconfig for the host cluster; absent: the in-cluster service account. */
  hostKubeconfig?: string;
  /** Name of the PoolSpirit (cluster-scoped) whose status the agent writes. */
  poolSpirit: string;
  /** Namespace of the bootstrap ConfigMap in the host cluster. */
  namespace: string;
  bootstrapConfigMap: string;
  /** NodePool name, for logs. */
  pool?: string;
  /** etcd's gRPC endpoints; without them only the health URL (if any) is checked, with no sizes or defrag. */
  etcd?: EtcdConnection;
  /**
   * Turn etcd auth on and keep it right (yurt-coordinator-compatible pools): needs `etcd`, whose client
   * certificate's CN must be one of the root users.
   */
  etcdAuth?: EtcdAuthSpec;
  /** etcd's /health URL (the metrics listener); a false answer makes the report unhealthy. */
  etcdHealthUrl?: string;
  /** etcd --quota-backend-bytes, reported and used to decide when NOSPACE may be disarmed. */
  etcdQuotaBytes?: number;
  defrag?: Partial<DefragPolicy>;
  /** Period of reading the Lease and etcd. Default 10 s. */
  intervalMs?: number;
  /** Period of reading the bootstrap ConfigMap from the host. Default 30 s. */
  bootstrapIntervalMs?: number;
  /** Unchanged sections are re-written (fresh observedTime, renewTime, sizes) this often. Default 30 s. */
  reportIntervalMs?: number;
  /** After this long without a good read, observed values are withdrawn (unknown). Default 60 s. */
  staleAfterMs?: number;
  /** Retry delays after a failed tick: exponential from initialMs up to maxMs (default 200 ms → interval). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Per-step timeout (each of bootstrap, leader, etcd, report). Default 30 s. */
  stepTimeoutMs?: number;
  /** The YurtHub leader Lease. Default kube-system/yurthub. */
  lease?: { namespace: string; name: string };
  logger?: Logger;
  logLevel?: LogLevel;
  now?: () => Date;
}

export const DEFAULTS = {
  intervalMs: 10_000,
  bootstrapIntervalMs: 30_000,
  reportIntervalMs: 30_000,
  staleAfterMs: 60_000,
  stepTimeoutMs: 30_000,
  backoffInitialMs: 200,
  lease: { namespace: 'kube-system', name: 'yurthub' },
  etcdQuotaBytes: quantityBytes(DEFAULT_ETCD_STORAGE.quotaBackendBytes),
  defrag: DEFAULT_DEFRAG_POLICY,
} as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `500ms`, `10s`, `5m`, `1h` → milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  if (!m) return undefined;
  // The pattern admits only the units UNIT_MS names.
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

const duration = z.string().transform((s, ctx) => {
  const ms = parseDuration(s);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a positive duration such as 500ms, 10s or 5m; got ${JSON.stringify(s)}`,
    });
    return z.NEVER;
  }
  return ms;
});

const bytes = z.string().transform((s, ctx) => {
  if (!isQuantity(s) || s.startsWith('-')) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a byte quantity such as 67108864, 64Mi or 1Gi; got ${JSON.stringify(s)}`,
    });
    return z.NEVER;
  }
  return quantityBytes(s);
});

const ratio = z.string().transform((s, ctx) => {
  const n = Number(s);
  if (s.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    ctx.addIssue({ code: 'custom', message: `must be a number from 0 to 1; got ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return n;
});

/** `a,b,c` → ['a', 'b', 'c'], at least one. */
const list = (item: z.ZodType<string, string>) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1, { error: 'must list at least one' }));

const url = z.string().regex(/^https?:\/\/[^/\s]+/, { error: 'must be an http(s) URL' });
const name = z.string().min(1, { error: 'must not be empty' });

const FlagsSchema = z.strictObject({
  kubeconfig: name,
  'host-kubeconfig': name.optional(),
  poolspirit: name,
  namespace: name,
  'bootstrap-configmap': name,
  pool: name.optional(),
  'etcd-endpoints': z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    )
    .pipe(z.array(url).min(1, { error: 'must list at least one URL' }))
    .optional(),
  'etcd-ca-file': name.optional(),
  'etcd-cert-file': name.optional(),
  'etcd-key-file': name.optional(),
  'etcd-health-url': url.optional(),
  'etcd-auth-root-users': list(name).optional(),
  'etcd-auth-limited-user': name.optional(),
  'etcd-auth-limited-prefixes': list(z.string().startsWith('/', { error: 'must start with /' })).optional(),
  'etcd-quota-bytes': bytes.optional(),
  'defrag-min-free-ratio': ratio.optional(),
  'defrag-min-free-bytes': bytes.optional(),
  'defrag-cooldown': duration.optional(),
  interval: duration.optional(),
  'bootstrap-interval': duration.optional(),
  'report-interval': duration.optional(),
  'stale-after': duration.optional(),
  'log-level': z.enum(LOG_LEVELS).optional(),
});

const FLAG_NAMES = Object.keys(FlagsSchema.shape) as (keyof typeof FlagsSchema.shape)[];

/** Where a required name comes from when the flag is not given (the rendered container sets these). */
const ENV_FALLBACK: Partial<Record<(typeof FLAG_NAMES)[number], string>> = {
  poolspirit: 'POOLSPIRIT_NAME',
  namespace: 'POD_NAMESPACE',
  'bootstrap-configmap': 'BOOTSTRAP_CONFIGMAP',
  pool: 'POOL_NAME',
};

export { UsageError };

export const USAGE = `usage: agent --kubeconfig FILE --poolspirit NAME --namespace NS --bootstrap-configmap NAME [options]
  --kubeconfig FILE            admin kubeconfig of the pool-spirit's own apiserver
  --host-kubeconfig FILE       kubeconfig of the host cluster (default: in-cluster service account)
  --poolspirit NAME            PoolSpirit to report into (env POOLSPIRIT_NAME)
  --namespace NS               namespace of the bootstrap ConfigMap (env POD_NAMESPACE)
  --bootstrap-configmap NAME   bootstrap ConfigMap (env BOOTSTRAP_CONFIGMAP)
  --pool NAME                  NodePool name, for logs (env POOL_NAME)
  --etcd-endpoints URL[,URL]   etcd client URLs (sizes, alarms, defrag); omitted: health URL only
  --etcd-ca-file/--etcd-cert-file/--etcd-key-file FILE   TLS material for etcd
  --etcd-health-url URL        etcd /health URL
  --etcd-auth-root-users CN[,CN]          turn etcd auth on: these certificate CNs keep the root role
  --etcd-auth-limited-user CN             ...this CN gets a role of its own name with only the prefixes below
  --etcd-auth-limited-prefixes P[,P]      ...readwrite on each key prefix (the three flags go together)
  --etcd-quota-bytes Q         etcd quota (default ${DEFAULTS.etcdQuotaBytes})
  --defrag-min-free-ratio R    defragment when 1 - inUse/dbSize >= R (default ${DEFAULTS.defrag.minFreeRatio})
  --defrag-min-free-bytes Q    ...and dbSize - inUse >= Q (default ${DEFAULTS.defrag.minFreeBytes})
  --defrag-cooldown D          least time between two defrags (default 5m)
  --interval D                 Lease and etcd reads (default 10s)
  --bootstrap-interval D       bootstrap ConfigMap reads (default 30s)
  --report-interval D          refresh of unchanged status (default 30s)
  --stale-after D              withdraw observations older than this (default 60s)
  --log-level L                debug, info, warn, error or silent (default info)`;

/** Parses the command line (both `--flag value` and `--flag=value`); throws UsageError naming the flag. */
export function parseAgentArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): AgentOptions {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: Object.fromEntries(FLAG_NAMES.map((f) => [f, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const input: Record<string, string> = {};
  for (const flag of FLAG_NAMES) {
    const fallback = ENV_FALLBACK[flag];
    const value = values[flag] ?? (fallback ? env[fallback] : undefined);
    if (value !== undefined) input[flag] = value;
  }
  const parsed = FlagsSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const flag = String(issue.path[0] ?? '');
      const fallback = ENV_FALLBACK[flag as (typeof FLAG_NAMES)[number]];
      const missing = input[flag] === undefined;
      return missing ? `--${flag} is required${fallback ? ` (or env ${fallback})` : ''}` : `--${flag} ${issue.message}`;
    });
    throw new UsageError(`${lines.join('\n')}\n${USAGE}`);
  }
  const f = parsed.data;
  const tlsFiles = [f['etcd-ca-file'], f['etcd-cert-file'], f['etcd-key-file']];
  if (!f['etcd-endpoints'] && tlsFiles.some(Boolean)) {
    throw new UsageError(`--etcd-ca-file, --etcd-cert-file and --etcd-key-file need --etcd-endpoints\n${USAGE}`);
  }
  if (f['etcd-endpoints']?.some((e) => e.startsWith('https:')) && !f['etcd-ca-file']) {
    throw new UsageError(`--etcd-ca-file is required for https --etcd-endpoints\n${USAGE}`);
  }
  if (!!f['etcd-cert-file'] !== !!f['etcd-key-file']) {
    throw new UsageError(`--etcd-cert-file and --etcd-key-file go together\n${USAGE}`);
  }
  const authFlags = [f['etcd-auth-root-users'], f['etcd-auth-limited-user'], f['etcd-auth-limited-prefixes']];
  if (authFlags.some(Boolean) && !authFlags.every(Boolean)) {
    throw new UsageError(
      `--etcd-auth-root-users, --etcd-auth-limited-user and --etcd-auth-limited-prefixes go together\n${USAGE}`,
    );
  }
  if (authFlags.some(Boolean) && !f['etcd-cert-file']) {
    throw new UsageError(`--etcd-auth-* needs --etcd-endpoints and --etcd-cert-file (a root user's)\n${USAGE}`);
  }
  const defrag: Partial<DefragPolicy> = {};
  if (f['defrag-min-free-ratio'] !== undefined) defrag.minFreeRatio = f['defrag-min-free-ratio'];
  if (f['defrag-min-free-bytes'] !== undefined) defrag.minFreeBytes = f['defrag-min-free-bytes'];
  if (f['defrag-cooldown'] !== undefined) defrag.cooldownMs = f['defrag-cooldown'];
  return {
    kubeconfig: f.kubeconfig,
    hostKubeconfig: f['host-kubeconfig'],
    poolSpirit: f.poolspirit,
    namespace: f.namespace,
    bootstrapConfigMap: f['bootstrap-configmap'],
    pool: f.pool,
    etcd: f['etcd-endpoints']
      ? {
          endpoints: f['etcd-endpoints'],
          caFile: f['etcd-ca-file'],
          certFile: f['etcd-cert-file'],
          keyFile: f['etcd-key-file'],
        }
      : undefined,
    etcdAuth:
      f['etcd-auth-root-users'] && f['etcd-auth-limited-user'] && f['etcd-auth-limited-prefixes']
        ? {
            rootUsers: f['etcd-auth-root-users'],
            limitedUser: f['etcd-auth-limited-user'],
            prefixes: f['etcd-auth-limited-prefixes'],
          }
        : undefined,
    etcdHealthUrl: f['etcd-health-url'],
    etcdQuotaBytes: f['etcd-quota-bytes'],
    defrag,
    intervalMs: f.interval,
    bootstrapIntervalMs: f['bootstrap-interval'],
    reportIntervalMs: f['report-interval'],
    staleAfterMs: f['stale-after'],
    logLevel: f['log-level'],
  };
}
