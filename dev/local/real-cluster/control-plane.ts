/**
 * A real host cluster on this machine: the pinned builds of etcd, kube-apiserver, kube-controller-manager
 * and kube-scheduler (`npm run kube-bins`), each its own OS process, with the flags in args.ts. Nodes are
 * simulated by the node kubelet (dev/local/kubelet/node-kubelet.ts); everything else is real Kubernetes.
 *
 * Certificates: one cluster CA signs the apiserver's serving certificate and every client identity
 * (admin, controller-manager, scheduler, and whatever `writeKubeconfig` is asked for). It is the CA a
 * YurtHub's node certificate comes from, and kube-controller-manager publishes it as kube-root-ca.crt.
 * Keys live in the cluster's directory (tmpfs by default) and nowhere else.
 */
import { webcrypto } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import * as x509 from '../../../shared/x509.ts';
import { type RunningEtcd, startEtcd } from '../etcd/launch.ts';
import { kubeconfigYaml } from '../kube-api/index.ts';
import { requireKubeBinary } from '../kube-bins/index.ts';
import { type CertAndKey, type CertificateAuthority, issueClientCertificate, issueServingCertificate } from '../pki.ts';
import { cleanupOnExit } from '../processes/exit-cleanup.ts';
import { freePorts } from '../processes/free-ports.ts';
import {
  httpStatus,
  type ProcessExit,
  type SupervisedProcess,
  spawnSupervised,
  waitUntilReady,
} from '../processes/supervise.ts';
import {
  apiServerArgs,
  type ControlPlaneLayout,
  controllerManagerArgs,
  SERVICE_CLUSTER_IP_RANGE,
  schedulerArgs,
} from './args.ts';
import { auditLogArgs } from './audit-log.ts';

export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

export interface StartRealHostClusterOptions {
  name: string;
  /** Signs the serving certificate and every client identity. */
  ca: CertificateAuthority;
  /** Where certificates, kubeconfigs and logs go. Default: a new directory in /dev/shm, removed on stop. */
  dir?: string;
  /** Lifecycle lines (pids, readiness), one each. */
  log?: (line: string) => void;
  readyDeadlineMs?: number;
  /** Appended to kube-apiserver's args (a repeated flag wins), e.g. `--watch-cache=false` to serve watches from etcd. */
  extraApiServerArgs?: string[];
  /** Writes kube-apiserver's audit log (level Metadata, every request) to `auditLogPath`: see audit-log.ts. */
  auditLog?: boolean;
  /**
   * Starts kube-controller-manager and kube-scheduler (default true). A test of API semantics alone (no
   * Deployment to roll, no pod to place, no garbage to collect) leaves them out and starts in less CPU.
   */
  controllers?: boolean;
}

export interface ClientIdentity {
  user: string;
  groups?: string[];
}

export interface RealHostCluster {
  name: string;
  /** https://127.0.0.1:<port> */
  url: string;
  caPem: string;
  dir: string;
  /** Admin (system:masters) access. */
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  /** The controllers' pids are absent when started with `controllers: false`. */
  pids: Record<'etcd' | 'kube-apiserver', number> &
    Partial<Record<'kube-controller-manager' | 'kube-scheduler', number>>;
  /** The cluster's etcd (plain HTTP on loopback): for tests that compact it or read what is stored. */
  etcdEndpoint: string;
  /** With option `auditLog`: kube-apiserver's audit log (read it with AuditRequestLog). */
  auditLogPath?: string;
  args: Record<Exclude<ControlPlaneComponent, 'etcd'>, readonly string[]>;
  /** Writes a kubeconfig whose client certificate names `identity`; returns the certificate too. */
  writeKubeconfig(path: string, identity: ClientIdentity): Promise<CertAndKey>;
  kubeconfigFor(identity: ClientIdentity): Promise<string>;
  /** Settles when a component ends on its own. */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

export class ControlPlaneStartError extends Error {
  constructor(component: ControlPlaneComponent, exit: ProcessExit) {
    super(
      `${component} exited (${exit.signal ?? `code ${exit.exitCode}`}) before it was ready; it said:\n${exit.lastLines}`,
    );
    this.name = 'ControlPlaneStartError';
  }
}

export async function startRealHostCluster(opts: StartRealHostClusterOptions): Promise<RealHostCluster> {
  const log = opts.log ?? (() => undefined);
  const deadline = Date.now() + (opts.readyDeadlineMs ?? 120_000);
  const binaries = {
    'kube-apiserver': requireKubeBinary('kube-apiserver'),
    'kube-controller-manager': requireKubeBinary('kube-controller-manager'),
    'kube-scheduler': requireKubeBinary('kube-scheduler'),
  };
  const ownsDir = opts.dir === undefined;
  const dir = opts.dir ?? (await mkdtemp(join('/dev/shm', `pool-spirit-host-${opts.name}-`)));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const forgetDir = ownsDir ? cleanupOnExit(() => rmSync(dir, { recursive: true, force: true })) : () => undefined;
  const processes: SupervisedProcess[] = [];
  let etcd: RunningEtcd | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const p of [...processes].reverse()) await p.stop();
      await etcd?.stop();
      forgetDir();
      if (ownsDir) await rm(dir, { recursive: true, force: true });
    })());
  try {
    etcd = await startEtcd({ dataDir: join(dir, 'etcd'), name: opts.name.replace(/[^A-Za-z0-9._-]/g, '-') });
    log(`etcd: pid ${etcd.pid} at ${etcd.endpoint}`);
    const [apiServerPort] = await freePorts(1);
    const url = `https://127.0.0.1:${apiServerPort}`;
    const file = (name: string) => join(dir, name);
    const identityKubeconfig = async (identity: ClientIdentity) => {
      const cert = await issueClientCertificate(opts.ca, identity);
      return { cert, yaml: kubeconfigYaml(opts.name, url, { caPem: opts.ca.certPem, identity: cert }) };
    };
    const layout: ControlPlaneLayout = {
      dir,
      etcdUrl: etcd.endpoint,
      apiServerPort: apiServerPort!,
      serviceClusterIpRange: SERVICE_CLUSTER_IP_RANGE,
      files: {
        caCert: file('ca.crt'),
        apiServerCert: file('apiserver.crt'),
        apiServerKey: file('apiserver.key'),
        saPublicKey: file('sa.pub'),
        saPrivateKey: file('sa.key'),
        controllerManagerKubeconfig: file('controller-manager.kubeconfig'),
        schedulerKubeconfig: file('scheduler.kubeconfig'),
      },
    };
    // The names a client inside the cluster would dial, and the Service's first address (10.96.0.1).
    const serving = await issueServingCertificate(opts.ca, {
      dns: [
        'localhost',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
      ],
      ips: ['127.0.0.1', '::1', '10.96.0.1'],
    });
    const sa = await serviceAccountKeys();
    const secret = { mode: 0o600 } as const;
    await writeFile(layout.files.caCert, opts.ca.certPem);
    await writeFile(layout.files.apiServerCert, serving.certPem);
    await writeFile(layout.files.apiServerKey, serving.keyPem, secret);
    await writeFile(layout.files.saPublicKey, sa.publicPem);
    await writeFile(layout.files.saPrivateKey, sa.privatePem, secret);
    await writeFile(
      layout.files.controllerManagerKubeconfig,
      (await identityKubeconfig({ user: 'system:kube-controller-manager' })).yaml,
      secret,
    );
    await writeFile(
      layout.files.schedulerKubeconfig,
      (await identityKubeconfig({ user: 'system:kube-scheduler' })).yaml,
      secret,
    );
    const admin = await identityKubeconfig({ user: 'local-admin', groups: ['system:masters'] });
    const kubeconfigPath = file('admin.kubeconfig');
    await writeFile(kubeconfigPath, admin.yaml, secret);

    const audit = opts.auditLog ? await auditLogArgs(dir) : undefined;
    const args = {
      'kube-apiserver': [...apiServerArgs(layout), ...(audit?.args ?? []), ...(opts.extraApiServerArgs ?? [])],
      'kube-controller-manager': controllerManagerArgs(layout),
      'kube-scheduler': schedulerArgs(layout),
    };
    const start = (component: keyof typeof binaries) => {
      const proc = spawnSupervised(component, binaries[component], args[component], file(`${component}.log`));
      processes.push(proc);
      log(`${component}: started pid ${proc.pid}`);
      return proc;
    };
    const failed = (component: ControlPlaneComponent) => (exit: ProcessExit) =>
      new ControlPlaneStartError(component, exit);
    const tls = { caPem: opts.ca.certPem, cert: admin.cert.certPem, key: admin.cert.keyPem };
    const apiServer = start('kube-apiserver');
    await waitUntilReady(apiServer, () => httpStatus(`${url}/readyz`, tls), deadline, failed('kube-apiserver'));
    log(`kube-apiserver: ready at ${url}`);
    let controllerPids: Partial<Record<'kube-controller-manager' | 'kube-scheduler', number>> = {};
    if (opts.controllers !== false) {
      const controllerManager = start('kube-controller-manager');
      const scheduler = start('kube-scheduler');
      // Neither serves a port; the proof they run is that they lasted through their start.
      await waitAlive(controllerManager, 1_500, failed('kube-controller-manager'));
      await waitAlive(scheduler, 0, failed('kube-scheduler'));
      controllerPids = { 'kube-controller-manager': controllerManager.pid, 'kube-scheduler': scheduler.pid };
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(admin.yaml);
    const runningEtcd = etcd;
    return {
      name: opts.name,
      url,
      caPem: opts.ca.certPem,
      dir,
      kubeConfig,
      kubeconfigPath,
      etcdEndpoint: runningEtcd.endpoint,
      ...(audit ? { auditLogPath: audit.path } : {}),
      pids: {
        etcd: runningEtcd.pid,
        'kube-apiserver': apiServer.pid,
        ...controllerPids,
      },
      args,
      async writeKubeconfig(path, identity) {
        const k = await identityKubeconfig(identity);
        await writeFile(path, k.yaml, secret);
        return k.cert;
      },
      kubeconfigFor: async (identity) => (await identityKubeconfig(identity)).yaml,
      exited: Promise.race([
        ...processes.map((p) => p.exited),
        runningEtcd.exited.then(
          (how): ProcessExit => ({ name: 'etcd', exitCode: null, signal: null, lastLines: how, at: new Date() }),
        ),
      ]),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resolves after `ms` if the process is still running; rejects with its exit otherwise. */
async function waitAlive(proc: SupervisedProcess, ms: number, onExit: (exit: ProcessExit) => Error): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
  const end = proc.ended();
  if (end) throw onExit(end);
}

/** The service account token signing key pair (ECDSA P-256: ES256 tokens), PEM. */
async function serviceAccountKeys(): Promise<{ publicPem: string; privatePem: string }> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  return {
    publicPem: x509.PemConverter.encode(await webcrypto.subtle.exportKey('spki', keys.publicKey), 'PUBLIC KEY'),
    privatePem: x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'),
  };
}
