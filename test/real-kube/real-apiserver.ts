/**
 * A real kube-apiserver 1.36 on a real etcd 3.6, started from a rendered pool-spirit (its exact args), with
 * kubectl acting as the rendered agent's identity (system:masters inside the pool-spirit) — a real apiserver
 * for tests that need one, until the real host control plane is wired into the local stack.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../core/kube.ts';
import { renderPoolSpirit } from '../../core/index.ts';
import { KUBECTL } from '../../local/kube-bins/index.ts';
import { pointedAt } from '../../local/kubelet/process/pool-spirit-process.ts';
import { startRealControlPlane, type PodSpec, type RealControlPlane } from '../../local/kubelet/process/real-control-plane.ts';
import { renderInput } from '../core/fixtures.ts';

const run = promisify(execFile);

export async function renderedPod(raw: Record<string, unknown> = {}) {
  const out = await renderPoolSpirit(await renderInput({ existingPki: undefined, now: new Date(), raw }));
  const deployment = out.objects.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: PodSpec } } };
  const secrets = new Map(out.objects.filter((o) => o.kind === 'Secret').map((s) => [s.metadata.name, (s as KubeObject & { data: Record<string, string> }).data]));
  const secret = async (name: string) => secrets.get(name) ?? Promise.reject(new Error(`no Secret ${name}`));
  return { pod: deployment.spec.template.spec, secret, secrets, names: out.names };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RealApiserver {
  plane: RealControlPlane;
  pod: PodSpec;
  /** The rendered agent kubeconfig, pointed at the running apiserver. */
  kubeconfig: string;
  /** kubectl as the agent; rejects on a non-zero exit. */
  kubectl(...args: string[]): Promise<string>;
  /** kubectl as the agent, whatever the exit code; `stdin` is piped in when given. */
  try(args: string[], stdin?: string): Promise<KubectlResult>;
  /**
   * One raw request as the admin, impersonating `as` (user, then groups) when given: for calls kubectl cannot
   * make alone, such as a status patch with no GET before it (what the agent sends).
   */
  raw(method: string, path: string, opts?: { body?: string; contentType?: string; as?: string[] }): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export async function startRealApiserver(opts: { log?: (line: string) => void } = {}): Promise<RealApiserver> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-real-kube-'));
  const r = await renderedPod();
  const plane = await startRealControlPlane({ pod: r.pod, secret: r.secret, log: opts.log });
  const kubeconfig = join(dir, 'agent.kubeconfig');
  const agentSecret = r.secrets.get(r.names.agentSecret)!;
  await writeFile(kubeconfig, pointedAt(Buffer.from(agentSecret.kubeconfig!, 'base64').toString('utf8'), plane.apiServerUrl), { mode: 0o600 });
  const base = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')];
  const tryKubectl = (args: string[], stdin?: string) =>
    new Promise<KubectlResult>((resolve) => {
      const child = execFile(KUBECTL, [...base, ...args], { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(stdin ?? '');
    });
  const cert = Buffer.from(agentSecret['agent.crt']!, 'base64');
  const key = Buffer.from(agentSecret['agent.key']!, 'base64');
  const raw: RealApiserver['raw'] = (method, path, o = {}) =>
    new Promise((resolve, reject) => {
      const [user, ...groups] = o.as ?? [];
      const headers: Record<string, string | string[]> = { 'content-type': o.contentType ?? 'application/json' };
      if (user) headers['impersonate-user'] = user;
      if (groups.length) headers['impersonate-group'] = groups;
      const req = request(`${plane.apiServerUrl}${path}`, { method, ca: plane.caPem, cert, key, headers, timeout: 10_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(o.body);
    });
  return {
    plane,
    pod: r.pod,
    raw,
    kubeconfig,
    kubectl: async (...args) => (await run(KUBECTL, [...base, ...args], { maxBuffer: 16 << 20 })).stdout,
    try: tryKubectl,
    async stop() {
      await plane.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The agent's client identity and the pool CA, read from the apiserver's kubeconfig: for clients of one's own (a proxy). */
export async function agentTls(api: RealApiserver): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const config = parseYaml(await readFile(api.kubeconfig, 'utf8')) as { users: Array<{ user: Record<string, string> }> };
  const user = config.users[0]!.user;
  const pem = (key: string) => Buffer.from(user[key] ?? '', 'base64').toString('utf8');
  return { caPem: api.plane.caPem, certPem: pem('client-certificate-data'), keyPem: pem('client-key-data') };
}
