/**
 * A real kube-apiserver 1.36 on a real etcd 3.6, started from a rendered pool-spirit (its exact args), with
 * kubectl acting as the rendered agent's identity (system:masters inside the pool-spirit) — a real apiserver
 * for tests that need one, until the real host control plane is wired into the local stack.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { renderPoolSpirit } from '../../core/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import { kubeconfigYaml } from '../../dev/local/kube-api/index.ts';
import { KUBECTL } from '../../dev/local/kube-bins/index.ts';
import { pointedAt } from '../../dev/local/kubelet/process/pool-spirit-process.ts';
import {
  type PodSpec,
  type RealControlPlane,
  startRealControlPlane,
} from '../../dev/local/kubelet/process/real-control-plane.ts';
import { createCertificateAuthority, issueClientCertificate } from '../../dev/local/pki.ts';
import { type RealHostCluster, startRealHostCluster } from '../../dev/local/real-cluster/control-plane.ts';
import { renderInput } from '../core/fixtures.ts';

const run = promisify(execFile);

export async function renderedPod(raw: Record<string, unknown> = {}) {
  const out = await renderPoolSpirit(await renderInput({ existingPki: undefined, now: new Date(), raw }));
  const deployment = out.objects.find((o) => o.kind === 'Deployment') as KubeObject & {
    spec: { template: { spec: PodSpec } };
  };
  const secrets = new Map(
    out.objects
      .filter((o) => o.kind === 'Secret')
      .map((s) => [s.metadata.name, (s as KubeObject & { data: Record<string, string> }).data]),
  );
  const secret = async (name: string) => secrets.get(name) ?? Promise.reject(new Error(`no Secret ${name}`));
  return { pod: deployment.spec.template.spec, secret, secrets, names: out.names };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A real apiserver to test against, with kubectl and raw requests as one admin identity. */
export interface KubeHarness {
  /** A kubeconfig file of that identity. */
  kubeconfig: string;
  /** kubectl as that identity; rejects on a non-zero exit. */
  kubectl(...args: string[]): Promise<string>;
  /** kubectl as that identity, whatever the exit code; `stdin` is piped in when given. */
  try(args: string[], stdin?: string): Promise<KubectlResult>;
  /**
   * One raw request as that identity, impersonating `as` (user, then groups) when given: for calls kubectl
   * cannot make alone, such as a status patch with no GET before it (what the agent sends).
   */
  raw(
    method: string,
    path: string,
    opts?: { body?: string; contentType?: string; as?: string[] },
  ): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export interface RealApiserver extends KubeHarness {
  plane: RealControlPlane;
  pod: PodSpec;
}

/** `spec`: PoolSpirit spec fields to render with (e.g. apiServer.extraArgs), as an operator would set them. */
export async function startRealApiserver(
  opts: { log?: (line: string) => void; spec?: Record<string, unknown> } = {},
): Promise<RealApiserver> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-real-kube-'));
  const r = await renderedPod(opts.spec);
  const plane = await startRealControlPlane({ pod: r.pod, secret: r.secret, log: opts.log });
  const kubeconfig = join(dir, 'agent.kubeconfig');
  const agentSecret = r.secrets.get(r.names.agentSecret)!;
  await writeFile(
    kubeconfig,
    pointedAt(Buffer.from(agentSecret.kubeconfig!, 'base64').toString('utf8'), plane.apiServerUrl),
    { mode: 0o600 },
  );
  const identity = {
    caPem: plane.caPem,
    cert: Buffer.from(agentSecret['agent.crt']!, 'base64'),
    key: Buffer.from(agentSecret['agent.key']!, 'base64'),
  };
  const h = harness(plane.apiServerUrl, kubeconfig, identity, dir, () => plane.stop());
  return { ...h, plane, pod: r.pod };
}

/**
 * The local real host control plane (etcd, kube-apiserver with Node,RBAC, kube-controller-manager,
 * kube-scheduler) as a harness: for what a pool-spirit's apiserver does not serve (it runs with most API
 * groups off, apps among them).
 */
export async function startRealHostApiserver(): Promise<KubeHarness & { cluster: RealHostCluster }> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-real-host-'));
  const ca = await createCertificateAuthority('real-host-harness-ca');
  const cluster = await startRealHostCluster({ name: 'harness', ca });
  const cert = await issueClientCertificate(ca, { user: 'harness-admin', groups: ['system:masters'] });
  const kubeconfig = join(dir, 'admin.kubeconfig');
  await writeFile(kubeconfig, kubeconfigYaml('harness', cluster.url, { caPem: ca.certPem, identity: cert }), {
    mode: 0o600,
  });
  const h = harness(
    cluster.url,
    kubeconfig,
    { caPem: ca.certPem, cert: Buffer.from(cert.certPem), key: Buffer.from(cert.keyPem) },
    dir,
    () => cluster.stop(),
  );
  return { ...h, cluster };
}

function harness(
  url: string,
  kubeconfig: string,
  identity: { caPem: string; cert: Buffer; key: Buffer },
  dir: string,
  stopServer: () => Promise<void>,
): KubeHarness {
  const base = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')];
  const tryKubectl = (args: string[], stdin?: string) =>
    new Promise<KubectlResult>((resolve) => {
      const child = execFile(
        KUBECTL,
        [...base, ...args],
        { timeout: 60_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(stdin ?? '');
    });
  const raw: KubeHarness['raw'] = (method, path, o = {}) =>
    new Promise((resolve, reject) => {
      const [user, ...groups] = o.as ?? [];
      const headers: Record<string, string | string[]> = { 'content-type': o.contentType ?? 'application/json' };
      if (user) headers['impersonate-user'] = user;
      if (groups.length) headers['impersonate-group'] = groups;
      const req = request(
        `${url}${path}`,
        { method, ca: identity.caPem, cert: identity.cert, key: identity.key, headers, timeout: 10_000 },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(o.body);
    });
  return {
    raw,
    kubeconfig,
    kubectl: async (...args) => (await run(KUBECTL, [...base, ...args], { maxBuffer: 16 << 20 })).stdout,
    try: tryKubectl,
    async stop() {
      await stopServer();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The agent's client identity and the pool CA, read from the apiserver's kubeconfig: for clients of one's own (a proxy). */
export async function agentTls(api: RealApiserver): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const config = parseYaml(await readFile(api.kubeconfig, 'utf8')) as {
    users: Array<{ user: Record<string, string> }>;
  };
  const user = config.users[0]!.user;
  const pem = (key: string) => Buffer.from(user[key] ?? '', 'base64').toString('utf8');
  return { caPem: api.plane.caPem, certPem: pem('client-certificate-data'), keyPem: pem('client-key-data') };
}
