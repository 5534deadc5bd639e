/**
 * The pool-spirit agent: one loop that, each pass, (1) keeps the own apiserver bootstrapped, (2) reads the
 * YurtHub leader Lease, (3) reads and maintains etcd, and (4) writes what changed into the PoolSpirit
 * status in the host cluster. Steps fail independently; after a pass with a failure the next pass comes
 * sooner, with exponential backoff up to the normal interval, so an apiserver or etcd that is not up yet
 * is waited for without flooding it.
 */
import { ExponentialBackoff, type IBackoff, TaskCancelledError, TimeoutStrategy, timeout } from 'cockatiel';
import { createEtcdAccess, openEtcdClient } from './adapters/etcd.ts';
import { createEtcdAuthAccess } from './adapters/etcd-auth.ts';
import { HostCluster } from './adapters/host.ts';
import { loadHostKubeConfig, loadKubeConfigFile } from './adapters/kube.ts';
import { OwnApiserver } from './adapters/own-apiserver.ts';
import { certificateCommonName } from './adapters/tls-files.ts';
import { ReportSection } from './decide/report.ts';
import { createLogger, errorText } from './log.ts';
import { type AgentOptions, DEFAULTS } from './options.ts';
import { sleep } from './sleep.ts';
import { type AgentStats, newStats, type StepName } from './stats.ts';
import { type BootstrapStatus, BootstrapStep } from './steps/bootstrap.ts';
import { EtcdStep, etcdSection } from './steps/etcd.ts';
import { EtcdAuthStep } from './steps/etcd-auth.ts';
import { LeaderStep, leaderSection } from './steps/leader.ts';

export interface RunningAgent {
  /** Live counters; read them, do not change them. */
  readonly stats: AgentStats;
  /** Ends the loop (an in-flight step is abandoned at its next await) and closes the etcd client. */
  stop(): Promise<void>;
  /** Settles when the loop has ended (after stop()). */
  readonly done: Promise<void>;
}

/**
 * Starts the agent. Rejects at once on configuration errors (a missing kubeconfig file, no host access);
 * everything else (apiservers or etcd not up yet) is retried for as long as the agent runs.
 */
export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  if (options.etcdAuth) assertRootCapable(options);
  const now = options.now ?? (() => new Date());
  const log =
    options.logger ??
    createLogger({
      level: options.logLevel,
      base: { component: 'pool-spirit-agent', poolspirit: options.poolSpirit, pool: options.pool },
    });
  const intervalMs = options.intervalMs ?? DEFAULTS.intervalMs;
  const bootstrapIntervalMs = options.bootstrapIntervalMs ?? DEFAULTS.bootstrapIntervalMs;
  const reportIntervalMs = options.reportIntervalMs ?? DEFAULTS.reportIntervalMs;
  const staleAfterMs = options.staleAfterMs ?? DEFAULTS.staleAfterMs;
  const stepTimeoutMs = options.stepTimeoutMs ?? DEFAULTS.stepTimeoutMs;
  const quotaBytes = options.etcdQuotaBytes ?? DEFAULTS.etcdQuotaBytes;

  const own = new OwnApiserver(loadKubeConfigFile(options.kubeconfig, 'own apiserver (--kubeconfig)'));
  const host = new HostCluster(loadHostKubeConfig(options.hostKubeconfig));
  // One etcd client for the report, the maintenance and auth.
  const etcdClient = options.etcd ? openEtcdClient(options.etcd) : undefined;
  const etcd =
    options.etcd || options.etcdHealthUrl
      ? createEtcdAccess(options.etcd, options.etcdHealthUrl, etcdClient)
      : undefined;

  const stats = newStats();
  const sections = {
    bootstrap: new ReportSection<BootstrapStatus>({ clearable: [], meaningful: () => false }),
    leader: leaderSection(),
    etcd: etcdSection(),
  };
  const common = { stats, log, now, reportIntervalMs, staleAfterMs };
  const bootstrap = new BootstrapStep({
    host,
    own,
    namespace: options.namespace,
    configMap: options.bootstrapConfigMap,
    section: sections.bootstrap,
    stats,
    log,
    now,
    crdEstablishTimeoutMs: Math.max(1000, stepTimeoutMs - 1000),
  });
  const etcdAuth =
    options.etcdAuth && etcdClient
      ? new EtcdAuthStep({ access: createEtcdAuthAccess(etcdClient), spec: options.etcdAuth, stats, log, now })
      : undefined;
  const leader = new LeaderStep({ ...common, own, lease: options.lease ?? DEFAULTS.lease, section: sections.leader });
  const etcdStep = etcd
    ? new EtcdStep({
        ...common,
        etcd,
        quotaBytes,
        policy: { ...DEFAULTS.defrag, ...options.defrag },
        section: sections.etcd,
      })
    : undefined;

  const report = async () => {
    const status: Record<string, unknown> = {};
    for (const [name, section] of Object.entries(sections)) {
      const patch = section.pendingPatch();
      if (patch) status[name] = patch;
    }
    if (Object.keys(status).length === 0) return;
    await host.patchStatus(options.poolSpirit, status);
    stats.statusWrites++;
    for (const section of Object.values(sections)) section.markWritten(now().getTime());
  };

  const stopping = new AbortController();
  const stepTimeout = timeout(stepTimeoutMs, TimeoutStrategy.Aggressive);
  const failingSince: Partial<Record<StepName, { count: number }>> = {};
  const runStep = async (name: StepName, fn: (signal: AbortSignal) => Promise<void>): Promise<boolean> => {
    try {
      await stepTimeout.execute(({ signal }) => fn(signal), stopping.signal);
      if (failingSince[name]) log.info(`${name} recovered`, { failures: failingSince[name].count });
      delete failingSince[name];
      return true;
    } catch (err) {
      if (stopping.signal.aborted) return false;
      const message = err instanceof TaskCancelledError ? `timed out after ${stepTimeoutMs} ms` : errorText(err);
      stats.errors[name]++;
      stats.lastError = { step: name, message, time: now().toISOString() };
      const run = failingSince[name] ?? { count: 0 };
      failingSince[name] = run;
      run.count++;
      // The first failure of an outage is news; the retries while waiting for a component mostly are not.
      (run.count === 1 || run.count % 50 === 0 ? log.warn : log.debug)(`${name} failed`, {
        error: message,
        failures: run.count,
      });
      return false;
    }
  };

  let bootstrapDueAt = 0;
  const tick = async (): Promise<boolean> => {
    stats.ticks++;
    let ok = true;
    // First: until auth is on, the hub-facing etcd proxy serves nothing, and hubs wait on it.
    if (etcdAuth) ok = await runStep('etcdAuth', () => etcdAuth.run());
    if (now().getTime() >= bootstrapDueAt) {
      const done = await runStep('bootstrap', (signal) => bootstrap.run(signal));
      bootstrapDueAt = done ? now().getTime() + bootstrapIntervalMs : 0;
      ok &&= done;
    }
    ok = (await runStep('leader', () => leader.run())) && ok;
    if (etcdStep) ok = (await runStep('etcd', () => etcdStep.run())) && ok;
    // Report even after a failed step: a withdrawal or the other sections' news must still go out.
    ok = (await runStep('report', report)) && ok;
    return ok;
  };

  const backoffFactory = new ExponentialBackoff({
    initialDelay: options.backoff?.initialMs ?? DEFAULTS.backoffInitialMs,
    maxDelay: options.backoff?.maxMs ?? intervalMs,
  });
  const loop = (async () => {
    log.info('agent started', {
      kubeconfig: options.kubeconfig,
      host: options.hostKubeconfig ?? 'in-cluster',
      etcd: options.etcd?.endpoints ?? null,
    });
    let backoff: IBackoff<unknown> | undefined;
    while (!stopping.signal.aborted) {
      const ok = await tick();
      if (ok) backoff = undefined;
      else backoff = backoff ? backoff.next(undefined) : backoffFactory.next();
      await sleep(backoff ? Math.min(backoff.duration, intervalMs) : intervalMs, stopping.signal);
    }
  })();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping.abort();
      await loop;
      etcd?.close();
      log.info('agent stopped', { ticks: stats.ticks });
    })());
  return { stats, stop, done: loop };
}

/**
 * The agent keeps etcd's auth right only while it is a root user itself: a certificate whose CN is not
 * among the root users would lock the agent out at `auth enable`, so that is a configuration error.
 */
function assertRootCapable(options: AgentOptions): void {
  const certFile = options.etcd?.certFile;
  if (!certFile) throw new Error('etcd auth needs --etcd-endpoints with a client certificate (--etcd-cert-file)');
  const cn = certificateCommonName(certFile, '--etcd-cert-file');
  if (!options.etcdAuth?.rootUsers.includes(cn))
    throw new Error(`etcd auth: this agent's etcd certificate (CN ${cn}) is not one of --etcd-auth-root-users`);
}
