/**
 * One real YurtHub (OpenYurt v1.5.1, `npm run kube-bins`) as a process, without root: its own root dir
 * (certificates written there ahead of time, so no CSR), its own ports, no dummy interface and no iptables,
 * its cache under the root dir, and the coordinator given as 127.0.0.1 addresses (an IP skips YurtHub's
 * Service lookup in kube-system, which would need a ClusterIP routed by kube-proxy: root).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requireKubeBinary } from '../kube-bins/index.ts';
import type { CertAndKey, CertificateAuthority } from '../pki.ts';
import { freePorts } from '../processes/free-ports.ts';
import { type SupervisedProcess, spawnSupervised } from '../processes/supervise.ts';
import { hubClientCertificate, hubServingCertificate } from './certs.ts';

export interface YurtHubOptions {
  node: string;
  pool: string;
  /** Parent directory; the hub gets `<dir>/<node>`. */
  dir: string;
  host: { url: string; caPem: string; ca: CertificateAuthority; kubernetesServiceIP: string };
  coordinator: { serverAddr: string; storageAddr: string };
  /** Extra flags, appended (a repeated flag wins). */
  extraArgs?: string[];
}

export type HubRole = 'leader' | 'follower' | 'pending' | 'unknown';

export interface RunningYurtHub {
  node: string;
  pool: string;
  root: string;
  ports: { serve: number; proxy: number; proxySecure: number };
  process: SupervisedProcess;
  /** What the hub says it is, from its own metrics (yurt_coordinator_yurthub_role). */
  role(): Promise<HubRole>;
  /**
   * The coordinator healthy/ready gauges: healthy = elected leader or follower; ready = pool cache usable.
   * YurtHub sets them only when it asks itself (ready: on a pool-scoped request), so they can be stale.
   */
  coordinatorStatus(): Promise<{ healthy: boolean; ready: boolean }>;
  healthy(): Promise<boolean>;
  stop(): Promise<void>;
  kill(): void;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(server: string, caPem: string, pemPath: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: default-cluster',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPem)}`,
    'contexts:',
    '- name: default-context',
    '  context: {cluster: default-cluster, user: default-auth, namespace: default}',
    'current-context: default-context',
    'users:',
    '- name: default-auth',
    `  user: {client-certificate: ${pemPath}, client-key: ${pemPath}}`,
    '',
  ].join('\n');
}

/** Writes the root dir a hub of this node would have after its TLS bootstrap. */
export async function prepareHubRoot(opts: YurtHubOptions): Promise<{ root: string; client: CertAndKey }> {
  const root = join(opts.dir, opts.node);
  const pki = join(root, 'pki');
  await mkdir(pki, { recursive: true, mode: 0o700 });
  const client = await hubClientCertificate(opts.host.ca, opts.node);
  const serving = await hubServingCertificate(opts.host.ca, opts.node, opts.host.kubernetesServiceIP);
  const current = join(pki, 'yurthub-current.pem');
  await writeFile(current, `${client.certPem.trim()}\n${client.keyPem.trim()}\n`, { mode: 0o600 });
  await writeFile(join(pki, 'yurthub-server-current.pem'), `${serving.certPem.trim()}\n${serving.keyPem.trim()}\n`, {
    mode: 0o600,
  });
  await writeFile(join(pki, 'ca.crt'), opts.host.caPem, { mode: 0o644 });
  // yurthub.conf's server must equal --server-addr, or YurtHub wipes the root dir and bootstraps again.
  const conf = kubeconfig(opts.host.url, opts.host.caPem, current);
  await writeFile(join(root, 'yurthub.conf'), conf, { mode: 0o600 });
  await writeFile(join(root, 'bootstrap-hub.conf'), conf, { mode: 0o600 });
  return { root, client };
}

export function hubArgs(opts: YurtHubOptions, root: string, ports: RunningYurtHub['ports']): string[] {
  return [
    `--node-name=${opts.node}`,
    `--nodepool-name=${opts.pool}`,
    `--server-addr=${opts.host.url}`,
    `--bootstrap-file=${join(root, 'bootstrap-hub.conf')}`,
    `--root-dir=${root}`,
    `--disk-cache-path=${join(root, 'cache')}`,
    '--bind-address=127.0.0.1',
    '--bind-proxy-address=127.0.0.1',
    `--serve-port=${ports.serve}`,
    `--proxy-port=${ports.proxy}`,
    `--proxy-secure-port=${ports.proxySecure}`,
    '--enable-dummy-if=false',
    '--enable-iptables=false',
    '--working-mode=edge',
    '--enable-coordinator=true',
    `--coordinator-server-addr=${opts.coordinator.serverAddr}`,
    `--coordinator-storage-addr=${opts.coordinator.storageAddr}`,
    '--coordinator-storage-prefix=/registry',
    '--v=2',
    ...(opts.extraArgs ?? []),
  ];
}

export async function startYurtHub(opts: YurtHubOptions): Promise<RunningYurtHub> {
  const binary = requireKubeBinary('yurthub');
  const { root } = await prepareHubRoot(opts);
  const [serve, proxy, proxySecure] = await freePorts(3);
  const ports = { serve: serve!, proxy: proxy!, proxySecure: proxySecure! };
  const proc = spawnSupervised(
    `yurthub ${opts.node}`,
    binary,
    hubArgs(opts, root, ports),
    join(opts.dir, `${opts.node}.log`),
  );
  const metrics = async (): Promise<string> => {
    const res = await fetch(`http://127.0.0.1:${ports.serve}/metrics`, { signal: AbortSignal.timeout(2000) });
    return res.text();
  };
  const gauge = (text: string, name: string): number | undefined => {
    const m = text.match(new RegExp(`^node_yurthub_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm'));
    return m ? Number(m[1]) : undefined;
  };
  return {
    node: opts.node,
    pool: opts.pool,
    root,
    ports,
    process: proc,
    async role() {
      try {
        const v = gauge(await metrics(), 'yurt_coordinator_yurthub_role');
        // pkg/yurthub/yurtcoordinator/leader_election.go: LeaderHub = 1, FollowerHub = 2, PendingHub = 3.
        return v === 1 ? 'leader' : v === 2 ? 'follower' : v === 3 ? 'pending' : 'unknown';
      } catch {
        return 'unknown';
      }
    },
    async coordinatorStatus() {
      try {
        const text = await metrics();
        return {
          healthy: gauge(text, 'yurt_coordinator_healthy_status') === 1,
          ready: gauge(text, 'yurt_coordinator_ready_status') === 1,
        };
      } catch {
        return { healthy: false, ready: false };
      }
    },
    async healthy() {
      try {
        return (await fetch(`http://127.0.0.1:${ports.serve}/v1/healthz`, { signal: AbortSignal.timeout(2000) })).ok;
      } catch {
        return false;
      }
    },
    stop: () => proc.stop(),
    kill() {
      process.kill(proc.pid, 'SIGKILL');
    },
  };
}
