/**
 * OpenYurt's own yurt-manager (v1.5.1 or v1.7.0, each built from its pinned module by `npm run kube-bins`) beside
 * a real local host cluster (dev/local/real-cluster), as its chart deploys it, minus the Deployment: here it is a
 * child process.
 *
 * What is installed, from the chart of the same module (rendered by chart.ts; nothing copied into the repo):
 * the ServiceAccount `kube-system/yurt-manager` and one per controller, every ClusterRole, Role and binding,
 * the empty Secret `yurt-manager-webhook-certs`, the Service `yurt-manager-webhook-service` and the two webhook
 * configurations. The Secret and the webhook configurations are created only when missing: after its first
 * start yurt-manager owns their contents (certificates, caBundle, the `yurt-manager-template` annotation).
 *
 * How the apiserver reaches its webhooks: there is no kube-proxy or cluster network here, and Endpoints or
 * EndpointSlices cannot carry loopback addresses, so the chart's `service:` references cannot be routed.
 * yurt-manager's own URL mode is used instead: `WEBHOOK_HOST=127.0.0.1` and `WEBHOOK_PORT` (= `--webhook-port`)
 * make it write `url: https://127.0.0.1:<port><path>` into both webhook configurations and issue its serving
 * certificate for IP 127.0.0.1. v1.5.1 fills the CRDs' conversion caBundle but never rewrites their `service:`, and
 * v1.7.0 rewrites it to a URL without the port (`https://<WEBHOOK_HOST><path>`), so the one change made to
 * OpenYurt's CRDs is that every conversion clientConfig naming yurt-manager-webhook-service becomes
 * `url: https://127.0.0.1:<port><same path>` (NodePool, YurtAppSet and Gateway in both releases); both then only
 * fill its caBundle. pointConversionWebhooks does it, on CRDs already installed or when it installs them.
 *
 * Addresses: loopback only. yurt-manager binds its webhook server to 0.0.0.0 (hard-coded in both releases), so it
 * runs in a network namespace of its own whose only interface is its loopback (loopback-netns.ts), joined to this
 * machine's 127.0.0.1 for the webhook, health-probe and metrics ports (in) and the apiserver's port (out).
 *
 * Identity: a client certificate for `system:serviceaccount:kube-system:yurt-manager` (the chart's
 * ServiceAccount and groups), so the chart's RBAC judges it. Its controllers authenticate as their own
 * ServiceAccounts `kube-system/yurt-manager-<controller>` through TokenRequest, as in a real cluster.
 */
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException, HttpMethod, type KubernetesObject } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { openYurtCrds } from '../fleet/seed.ts';
import { type KubeBinary, type OpenYurtRelease, requireKubeBinary } from '../kube-bins/index.ts';
import { cleanupOnExit } from '../processes/exit-cleanup.ts';
import { freePorts } from '../processes/free-ports.ts';
import {
  httpStatus,
  type ProcessExit,
  type SupervisedProcess,
  spawnSupervised,
  waitUntilReady,
} from '../processes/supervise.ts';
import type { ClientIdentity, RealHostCluster } from '../real-cluster/control-plane.ts';
import { readChartValues, renderYurtManagerChart } from './chart.ts';
import { type LoopbackNamespace, startLoopbackNamespace } from './loopback-netns.ts';

export const YURT_MANAGER_NAMESPACE = 'kube-system';
export const YURT_MANAGER_IDENTITY: ClientIdentity = {
  user: `system:serviceaccount:${YURT_MANAGER_NAMESPACE}:yurt-manager`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${YURT_MANAGER_NAMESPACE}`],
};
/**
 * The controllers run by default, per release (aliases; `--controllers` has no default in either release: without
 * it none would run; the chart's `-nodelifecycle,*` would start every other one).
 *  - v1.5.1: the ones issue 35 asks for.
 *  - v1.7.0 registers no yurtcoordinatorcert and no delegatelease (it refuses them as unknown controllers): it has
 *    no yurt-coordinator. Its per-pool hub leader election (hubleader, hubleaderconfig, hubleaderrbac) acts on
 *    every NodePool instead, so it runs beside the product too.
 */
export const DEFAULT_CONTROLLERS = {
  'v1.5.1': ['nodepool', 'yurtcoordinatorcert', 'delegatelease', 'podbinding', 'csrapprover'],
  'v1.7.0': ['nodepool', 'podbinding', 'csrapprover', 'hubleader', 'hubleaderconfig', 'hubleaderrbac'],
} as const satisfies Record<OpenYurtRelease, readonly string[]>;
export const MUTATING_WEBHOOK_CONFIGURATION = 'yurt-manager-mutating-webhook-configuration';
export const VALIDATING_WEBHOOK_CONFIGURATION = 'yurt-manager-validating-webhook-configuration';
const WEBHOOK_SERVICE = 'yurt-manager-webhook-service';
/** Who installs the chart's objects (what `helm` would be). */
const INSTALL_MANAGER = 'openyurt-local-install';
/** yurt-manager logs every controller's bearer token at --v=5 (client.go CheckAuthorization, v1.5.1 and v1.7.0). */
const MAX_VERBOSITY = 4;
/** Owned by yurt-manager after its first start: created when missing, never re-applied. */
const CREATED_ONCE = new Set(['Secret', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
const KIND_ORDER = [
  'ServiceAccount',
  'ClusterRole',
  'Role',
  'ClusterRoleBinding',
  'RoleBinding',
  'Secret',
  'Service',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
];
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
/** An error line of zap's development encoder, which v1.7.0 gives controller-runtime (v1.5.1 gives it klog). */
const ZAP_ERROR_LINE = /^\d{4}-\d\d-\d\dT\S+\tERROR\t/;

/** Every release whose CRDs the local stack installs runs its own yurt-manager, as a real cluster does. */
export type YurtManagerRelease = OpenYurtRelease;

/** The local build of each release (scripts/kube-bins.sh). */
const BINARIES = {
  'v1.5.1': 'yurt-manager',
  'v1.7.0': 'yurt-manager-v1.7.0',
} as const satisfies Record<YurtManagerRelease, KubeBinary>;

export interface StartYurtManagerOptions {
  /** A running real host cluster (its admin installs; yurt-manager gets its own identity's kubeconfig). */
  cluster: Pick<RealHostCluster, 'url' | 'kubeConfig' | 'writeKubeconfig'>;
  /** Default v1.5.1. */
  release?: YurtManagerRelease;
  /** `--controllers`, aliases or canonical names; `-name` disables. Default DEFAULT_CONTROLLERS[release]. */
  controllers?: readonly string[];
  /** `--disable-independent-webhooks` (`node`, `pod`, `*`); default none, as the chart. */
  disableIndependentWebhooks?: readonly string[];
  /**
   * Where the webhook serving certificate is kept. `secret` (default): Secret kube-system/yurt-manager-webhook-certs,
   * as the chart deploys it (the certificate, and so the caBundle, survive restarts). `fs`: only the cert dir,
   * which v1.5.1 needs pre-seeded with the six files (its fs writer never creates missing ones; fixed in v1.7.0,
   * which is not seeded).
   */
  certWriter?: 'secret' | 'fs';
  /** klog `--v`; at most 4 (5 logs bearer tokens). Default: the chart's `log.level` (4). */
  verbosity?: number;
  /** Appended to the args. */
  extraArgs?: readonly string[];
  /** Kubeconfig, cert dir, relay sockets and log. Default: a new directory under the OS temp dir, removed on stop. */
  dir?: string;
  /** Lifecycle lines, one each. */
  log?: (line: string) => void;
  /** Per start (and restart). Default 60 s. */
  readyDeadlineMs?: number;
}

export interface YurtManagerPorts {
  webhook: number;
  healthProbe: number;
  metrics: number;
}

export interface RunningYurtManager {
  release: YurtManagerRelease;
  /** The current process (it changes on restart). */
  readonly pid: number;
  ports: YurtManagerPorts;
  args: readonly string[];
  /** The whole environment it runs with (nothing else is inherited). */
  env: Readonly<Record<string, string>>;
  logFile: string;
  kubeconfigPath: string;
  /** The chart's objects, as installed. */
  installed: readonly KubernetesObject[];
  /** CRDs whose conversion clientConfig now names yurt-manager's URL. */
  conversionCrds: readonly string[];
  /** ms from spawn to ready (readyz 200, webhook configurations and CRD conversion carry its CA) for the latest start. */
  readonly readyMs: number;
  /** PEM of the CA that signed its webhook serving certificate (from the webhook configurations). */
  readonly webhookCaPem: string;
  /** Settles if the current process, or the relay holding its network namespace, ends without stop() or restart(). */
  readonly exited: Promise<ProcessExit>;
  /** The log written by the current process (since its spawn). */
  currentLog(): Promise<string>;
  /**
   * Error lines of every process started so far (restarts append to one log): klog's (`E…`), and, in v1.7.0, where
   * controller-runtime logs through zap instead of klog, zap's (`<time>\tERROR\t…`, without its stack trace).
   */
  errorLines(): Promise<string[]>;
  lastLines(count?: number): string;
  /** Resolves when the current process holds the leader Lease (its controllers start then); returns ms since spawn. */
  waitLeading(timeoutMs?: number): Promise<number>;
  /** Stops the process and starts it again with the same ports, identity and cert dir; waits until ready. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export class YurtManagerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YurtManagerStartError';
  }
}

export async function startYurtManager(opts: StartYurtManagerOptions): Promise<RunningYurtManager> {
  const release = opts.release ?? 'v1.5.1';
  if (!Object.hasOwn(BINARIES, release)) {
    throw new TypeError(
      `startYurtManager: release ${JSON.stringify(release)} has no yurt-manager build; built: ${Object.keys(BINARIES).join(', ')}`,
    );
  }
  const say = opts.log ?? (() => undefined);
  const binary = requireKubeBinary(BINARIES[release]);
  const verbosity = opts.verbosity ?? MAX_VERBOSITY;
  if (verbosity > MAX_VERBOSITY) {
    throw new TypeError(
      `startYurtManager: verbosity ${verbosity} > ${MAX_VERBOSITY}: yurt-manager ${release} logs every controller's bearer token at --v=5`,
    );
  }
  const ownsDir = opts.dir === undefined;
  // Short: the relays' unix socket paths live under it.
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'ym-')));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const forgetDir = ownsDir ? cleanupOnExit(() => rmSync(dir, { recursive: true, force: true })) : () => undefined;
  let netns: LoopbackNamespace | undefined;
  let proc: SupervisedProcess | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await proc?.stop();
      await netns?.stop();
      forgetDir();
      if (ownsDir) await rm(dir, { recursive: true, force: true });
    })());
  try {
    const [webhook, healthProbe, metrics] = (await freePorts(3)) as [number, number, number];
    const ports: YurtManagerPorts = { webhook, healthProbe, metrics };
    const admin = RawObjectApi.fromKubeConfig(opts.cluster.kubeConfig);
    const installed = await installYurtManagerChart(admin, release, ports);
    say(`yurt-manager: chart ${release} installed (${installed.length} objects)`);
    const conversionCrds = await pointConversionWebhooks(admin, release, webhook);
    say(`yurt-manager: conversion of ${conversionCrds.join(', ')} at https://127.0.0.1:${webhook}`);

    const kubeconfigPath = join(dir, 'yurt-manager.kubeconfig');
    await opts.cluster.writeKubeconfig(kubeconfigPath, YURT_MANAGER_IDENTITY);
    const certDir = join(dir, 'webhook-certs');
    await mkdir(certDir, { recursive: true, mode: 0o700 });
    const certWriter = opts.certWriter ?? 'secret';
    if (certWriter === 'fs' && release === 'v1.5.1') await seedCertDir(certDir);
    const apiPort = Number(new URL(opts.cluster.url).port);
    netns = await startLoopbackNamespace({
      dir: join(dir, 'ns'),
      inbound: [webhook, healthProbe, metrics],
      outbound: [apiPort],
    });
    say(`yurt-manager: network namespace held by pid ${netns.pid}`);

    const values = await chartValues(release);
    const env: Record<string, string> = {
      // v1.5.1 calls ctrl.GetConfigOrDie() before it reads --kubeconfig; the variable serves v1.7.0 as well.
      KUBECONFIG: kubeconfigPath,
      HOME: dir,
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_PORT: String(webhook),
      WEBHOOK_CERT_DIR: certDir,
      WEBHOOK_CERT_WRITER: certWriter,
    };
    const args = [
      `--kubeconfig=${kubeconfigPath}`,
      `--metrics-addr=127.0.0.1:${metrics}`,
      `--health-probe-addr=127.0.0.1:${healthProbe}`,
      `--webhook-port=${webhook}`,
      `--v=${verbosity}`,
      `--working-namespace=${YURT_MANAGER_NAMESPACE}`,
      ...(values.leaderElectResourceName ? [`--leader-elect-resource-name=${values.leaderElectResourceName}`] : []),
      `--controllers=${(opts.controllers ?? DEFAULT_CONTROLLERS[release]).join(',')}`,
      ...(opts.disableIndependentWebhooks?.length
        ? [`--disable-independent-webhooks=${opts.disableIndependentWebhooks.join(',')}`]
        : []),
      ...(opts.extraArgs ?? []),
    ];
    const logFile = join(dir, 'yurt-manager.log');
    const ns = netns;
    let spawnedAt = 0;
    let logOffset = 0;
    let readyMs = 0;
    let webhookCaPem = '';
    const spawnOnce = async () => {
      logOffset = await stat(logFile).then(
        (s) => s.size,
        () => 0,
      );
      const command = ns.command(binary, args, env);
      spawnedAt = performance.now();
      const started = spawnSupervised('yurt-manager', command.file, command.args, logFile);
      proc = started;
      say(`yurt-manager: started pid ${started.pid}`);
      const deadline = Date.now() + (opts.readyDeadlineMs ?? 60_000);
      const failed = (exit: ProcessExit) =>
        new YurtManagerStartError(
          `yurt-manager ${release} exited (${exit.signal ?? `code ${exit.exitCode}`}) before it was ready; log ${logFile}; it said:\n${exit.lastLines}`,
        );
      await waitUntilReady(started, () => httpStatus(`http://127.0.0.1:${healthProbe}/readyz`), deadline, failed);
      webhookCaPem = await pollUntil(
        started,
        deadline,
        failed,
        `the webhook configurations and CRD conversion of ${conversionCrds.join(', ')} to carry yurt-manager's CA and https://127.0.0.1:${webhook} URLs`,
        () => registeredCa(admin, webhook, conversionCrds),
      );
      readyMs = Math.round(performance.now() - spawnedAt);
      say(`yurt-manager: ready in ${readyMs} ms`);
    };
    await spawnOnce();
    const currentLog = async () => (await readFile(logFile)).subarray(logOffset).toString('utf8');
    return {
      release,
      get pid() {
        return proc!.pid;
      },
      ports,
      args,
      env,
      logFile,
      kubeconfigPath,
      installed,
      conversionCrds,
      get readyMs() {
        return readyMs;
      },
      get webhookCaPem() {
        return webhookCaPem;
      },
      get exited() {
        return Promise.race([proc!.exited, ns.exited]);
      },
      currentLog,
      errorLines: async () =>
        (await readFile(logFile, 'utf8')).split('\n').filter((l) => /^E\d{4} /.test(l) || ZAP_ERROR_LINE.test(l)),
      lastLines: (count) => proc!.lastLines(count),
      async waitLeading(timeoutMs = 30_000) {
        const current = proc!;
        const lease = `${YURT_MANAGER_NAMESPACE}/${values.leaderElectResourceName || 'yurt-manager'}`;
        await pollUntil(
          current,
          Date.now() + timeoutMs,
          (exit) => new YurtManagerStartError(`yurt-manager exited before it led: ${exit.lastLines}`),
          `yurt-manager pid ${current.pid} to acquire the Lease ${lease}`,
          async () => (await currentLog()).includes(`successfully acquired lease ${lease}`),
        );
        return Math.round(performance.now() - spawnedAt);
      },
      async restart() {
        if (stopped !== undefined) throw new Error('yurt-manager: restart() after stop()');
        await proc!.stop();
        say('yurt-manager: stopped for a restart');
        await spawnOnce();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Installs what the chart installs, but the Deployment: RBAC and ServiceAccounts applied (server-side, as
 * `openyurt-local-install`); the empty webhook Secret and the webhook configurations created when missing.
 */
export async function installYurtManagerChart(
  admin: RawObjectApi,
  release: YurtManagerRelease,
  ports: YurtManagerPorts,
): Promise<KubernetesObject[]> {
  const objects = await renderYurtManagerChart(release, {
    namespace: YURT_MANAGER_NAMESPACE,
    values: { ports: { webhook: ports.webhook, metrics: ports.metrics, healthProbe: ports.healthProbe } },
  });
  const rank = (o: KubernetesObject) => {
    const i = KIND_ORDER.indexOf(o.kind ?? '');
    if (i < 0)
      throw new Error(`yurt-manager chart ${release}: no install order for kind ${o.kind} (${o.metadata?.name})`);
    return i;
  };
  const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
  for (const obj of ordered) {
    if (CREATED_ONCE.has(obj.kind ?? '')) await createIfMissing(admin, obj);
    else await admin.applyJson(obj, INSTALL_MANAGER, true);
  }
  return ordered;
}

interface CrdJson {
  metadata: { name: string };
  spec: {
    group: string;
    conversion?: {
      strategy?: string;
      webhook?: {
        clientConfig?: {
          url?: string;
          caBundle?: string;
          service?: { name?: string; namespace?: string; path?: string };
        };
      };
    };
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/**
 * Points every OpenYurt CRD whose conversion webhook is yurt-manager's (its Service, or a loopback URL of an
 * earlier yurt-manager) at `https://127.0.0.1:<webhookPort><path>`; installs the release's CRDs first (so
 * changed) when the NodePool CRD is not there. Returns the CRDs' names.
 */
export async function pointConversionWebhooks(
  admin: RawObjectApi,
  release: YurtManagerRelease,
  webhookPort: number,
): Promise<string[]> {
  const wanted = (path: string) => `https://127.0.0.1:${webhookPort}${path}`;
  const exists = await admin
    .requestJson(HttpMethod.GET, `${CRD_PATH}/nodepools.apps.openyurt.io`)
    .then(() => true)
    .catch((e: unknown) => {
      if (e instanceof ApiException && e.code === 404) return false;
      throw e;
    });
  if (!exists) {
    const names: string[] = [];
    for (const crd of (await openYurtCrds(release)) as unknown as CrdJson[]) {
      const config = crd.spec.conversion?.webhook?.clientConfig;
      const path = yurtManagerConversionPath(config);
      if (config && path !== undefined) {
        delete config.service;
        config.url = wanted(path);
        names.push(crd.metadata.name);
      }
      await createIfMissing(admin, crd as unknown as KubernetesObject);
    }
    await waitEstablished(admin, names);
    return names;
  }
  const list = await admin.requestJson<{ items: CrdJson[] }>(HttpMethod.GET, CRD_PATH);
  const names: string[] = [];
  for (const crd of list.items) {
    if (!crd.spec.group.endsWith('openyurt.io') || crd.spec.conversion?.strategy !== 'Webhook') continue;
    const config = crd.spec.conversion.webhook?.clientConfig;
    const path = yurtManagerConversionPath(config);
    if (path === undefined) continue;
    names.push(crd.metadata.name);
    if (config?.url === wanted(path)) continue;
    await admin.requestJson(HttpMethod.PATCH, `${CRD_PATH}/${crd.metadata.name}`, {
      contentType: 'application/merge-patch+json',
      body: { spec: { conversion: { webhook: { clientConfig: { service: null, url: wanted(path) } } } } },
    });
  }
  if (!names.includes('nodepools.apps.openyurt.io')) {
    throw new Error(
      'nodepools.apps.openyurt.io converts by no yurt-manager webhook (neither its Service nor a loopback URL): ' +
        "it is not OpenYurt's own CRD; install OpenYurt's CRDs (openYurtCrds in dev/local/fleet/seed.ts) instead",
    );
  }
  return names;
}

/** The path of a conversion clientConfig that is yurt-manager's: its Service in kube-system, or a loopback URL. */
function yurtManagerConversionPath(
  config: { url?: string; service?: { name?: string; namespace?: string; path?: string } } | undefined,
): string | undefined {
  if (config?.service?.name === WEBHOOK_SERVICE && config.service.namespace === YURT_MANAGER_NAMESPACE) {
    return config.service.path ?? '/';
  }
  if (config?.url) {
    const url = new URL(config.url);
    if (url.hostname === '127.0.0.1') return url.pathname;
  }
  return undefined;
}

async function waitEstablished(admin: RawObjectApi, names: string[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await admin.requestJson<CrdJson>(HttpMethod.GET, `${CRD_PATH}/${name}`);
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

interface WebhookConfigurationJson {
  webhooks?: Array<{ name: string; clientConfig?: { url?: string; caBundle?: string } }>;
}

/**
 * The CA PEM once both webhook configurations list webhooks that all carry one caBundle and a URL on the
 * webhook port, and each CRD's conversion carries the same caBundle; undefined before.
 */
async function registeredCa(
  admin: RawObjectApi,
  webhookPort: number,
  crds: readonly string[],
): Promise<string | undefined> {
  const bundles = new Set<string>();
  for (const [kind, name] of [
    ['mutatingwebhookconfigurations', MUTATING_WEBHOOK_CONFIGURATION],
    ['validatingwebhookconfigurations', VALIDATING_WEBHOOK_CONFIGURATION],
  ] as const) {
    const config = await admin.requestJson<WebhookConfigurationJson>(
      HttpMethod.GET,
      `/apis/admissionregistration.k8s.io/v1/${kind}/${name}`,
    );
    const hooks = config.webhooks ?? [];
    if (hooks.length === 0) return undefined;
    for (const hook of hooks) {
      if (!hook.clientConfig?.caBundle || !hook.clientConfig.url?.startsWith(`https://127.0.0.1:${webhookPort}/`)) {
        return undefined;
      }
      bundles.add(hook.clientConfig.caBundle);
    }
  }
  for (const name of crds) {
    const crd = await admin.requestJson<CrdJson>(HttpMethod.GET, `${CRD_PATH}/${name}`);
    const caBundle = crd.spec.conversion?.webhook?.clientConfig?.caBundle;
    if (!caBundle) return undefined;
    bundles.add(caBundle);
  }
  if (bundles.size !== 1) return undefined;
  return Buffer.from([...bundles][0]!, 'base64').toString('utf8');
}

async function pollUntil<T>(
  proc: SupervisedProcess,
  deadline: number,
  onExit: (exit: ProcessExit) => Error,
  what: string,
  check: () => Promise<T | undefined | false>,
): Promise<T> {
  let last = 'not yet';
  for (;;) {
    const end = proc.ended();
    if (end) throw onExit(end);
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      throw new YurtManagerStartError(
        `timed out waiting for ${what} (${last}); yurt-manager's log ${proc.logFile} ends:\n${proc.lastLines(25)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createIfMissing(admin: RawObjectApi, obj: KubernetesObject): Promise<void> {
  try {
    await admin.createJson(obj, INSTALL_MANAGER);
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
}

/** v1.5.1's fs cert writer reads all six files and fails forever when one is missing; junk makes it regenerate. */
async function seedCertDir(certDir: string): Promise<void> {
  for (const file of ['ca-key.pem', 'ca-cert.pem', 'key.pem', 'tls.key', 'cert.pem', 'tls.crt']) {
    await writeFile(join(certDir, file), 'seeded: not a certificate; yurt-manager replaces it\n', { mode: 0o600 });
  }
}

async function chartValues(release: YurtManagerRelease): Promise<{ leaderElectResourceName?: string }> {
  const name = (await readChartValues(release)).leaderElectResourceName;
  return typeof name === 'string' ? { leaderElectResourceName: name } : {};
}
