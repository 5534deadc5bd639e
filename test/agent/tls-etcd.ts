/**
 * A real etcd (the pinned build) with a pool-spirit's TLS setup, for the etcd auth and proxy tests: a pool
 * etcd CA signing etcd's serving certificate, the apiserver/agent client identity and the etcd proxy's
 * certificate (the leaf the render issues), a coordinator client CA signing the hubs' identity, and a
 * foreign etcd CA (another pool's). Files in a private temp dir (0600); etcd's data in /dev/shm, gone with it.
 * `restartEmpty()` kills etcd and starts a new one on the same ports with no data: a pool-spirit restart.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachingKeyFactory } from '../../core/render/keys.ts';
import { issueCa, issueLeaf } from '../../core/render/pki-issue.ts';
import { APISERVER_ETCD_CLIENT_USER, DEFAULT_PKI_POLICY, type LeafSpec } from '../../core/render/pki-spec.ts';
import { ETCD_TXN_FLAGS } from '../../core/yurt-coordinator/contract.ts';
import { etcdProxyLeaf } from '../../core/yurt-coordinator/etcd-proxy.ts';
import { COORDINATOR_CLIENT_USER } from '../../core/yurt-coordinator/identity.ts';
import { ETCD_BINARY } from '../../dev/local/etcd/launch.ts';
import { freePorts } from '../../dev/local/processes/free-ports.ts';
import {
  httpStatus,
  type SupervisedProcess,
  spawnSupervised,
  waitUntilReady,
} from '../../dev/local/processes/supervise.ts';

const keys = cachingKeyFactory();
const NOW = new Date();

const client = (id: LeafSpec['id'], cn: string, issuer: LeafSpec['issuer'] = 'etcd-ca'): LeafSpec => ({
  id,
  issuer,
  subject: `CN=${cn}`,
  dns: [],
  ips: [],
  usages: ['clientAuth'],
});

export interface Identity {
  certFile: string;
  keyFile: string;
}

export interface TlsEtcd {
  endpoint: string;
  dir: string;
  files: {
    etcdCa: string;
    /** The bundle the proxy trusts: the pool's etcd CA and the coordinator client CA. */
    proxyTrust: string;
  };
  /** kube-apiserver's and the agent's identity (a root user once auth is on). */
  root: Identity;
  proxy: Identity;
  /** The hubs' shared coordinator identity (coordinator client CA). */
  hub: Identity;
  /** Another pool's etcd client identity (a CA this etcd and the proxy do not trust). */
  foreign: Identity;
  pid(): number;
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTlsEtcd(): Promise<TlsEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-tls-etcd-'));
  const issue = async (leaf: LeafSpec, ca: Awaited<ReturnType<typeof issueCa>>): Promise<Identity> => {
    const issued = await issueLeaf(leaf, ca, NOW, DEFAULT_PKI_POLICY, keys);
    const certFile = join(dir, `${leaf.id}.crt`);
    const keyFile = join(dir, `${leaf.id}.key`);
    await writeFile(certFile, issued.certPem, { mode: 0o600 });
    await writeFile(keyFile, issued.keyPem, { mode: 0o600 });
    return { certFile, keyFile };
  };
  const policy = DEFAULT_PKI_POLICY;
  const etcdCa = await issueCa('etcd-ca', 'CN=test-etcd-ca', NOW, policy, keys);
  const coordinatorCa = await issueCa('yurt-coordinator-client-ca', 'CN=test-coordinator-ca', NOW, policy, keys);
  const foreignCa = await issueCa('ca', 'CN=test-foreign-etcd-ca', NOW, policy, keys);
  const server = await issue(
    {
      id: 'etcd-server',
      issuer: 'etcd-ca',
      subject: 'CN=etcd',
      dns: ['localhost'],
      ips: ['127.0.0.1'],
      usages: ['serverAuth'],
    },
    etcdCa,
  );
  const root = await issue(client('apiserver-etcd-client', APISERVER_ETCD_CLIENT_USER), etcdCa);
  const proxy = await issue(etcdProxyLeaf('cluster.local'), etcdCa);
  const hub = await issue(client('yurt-coordinator-yurthub-client', COORDINATOR_CLIENT_USER), coordinatorCa);
  const foreign = await issue(client('agent', APISERVER_ETCD_CLIENT_USER), foreignCa);
  const files = { etcdCa: join(dir, 'etcd-ca.crt'), proxyTrust: join(dir, 'etcd-client-ca.crt') };
  await writeFile(files.etcdCa, etcdCa.certPem);
  await writeFile(files.proxyTrust, `${etcdCa.certPem.trim()}\n${coordinatorCa.certPem.trim()}\n`);

  const [clientPort, peerPort, metricsPort] = await freePorts(3);
  const endpoint = `https://127.0.0.1:${clientPort}`;
  let generation = 0;
  let proc: SupervisedProcess;
  const start = async () => {
    const data = await mkdtemp(join('/dev/shm', 'ps-tls-etcd-data-'));
    const peer = `http://127.0.0.1:${peerPort}`;
    proc = spawnSupervised(
      'etcd',
      ETCD_BINARY,
      [
        '--name=poolspirit',
        `--data-dir=${join(data, 'data')}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=poolspirit=${peer}`,
        `--listen-metrics-urls=http://127.0.0.1:${metricsPort}`,
        `--cert-file=${server.certFile}`,
        `--key-file=${server.keyFile}`,
        `--trusted-ca-file=${files.etcdCa}`,
        '--client-cert-auth=true',
        '--heartbeat-interval=25',
        '--election-timeout=250',
        ...ETCD_TXN_FLAGS.map(([flag, value]) => `--${flag}=${value}`),
      ],
      join(dir, `etcd-${generation++}.log`),
    );
    const running = proc;
    const cleanup = () => rm(data, { recursive: true, force: true });
    await waitUntilReady(
      running,
      () => httpStatus(`http://127.0.0.1:${metricsPort}/health`),
      Date.now() + 20_000,
      (e) => {
        void cleanup();
        return new Error(`etcd exited: ${e.lastLines}`);
      },
    );
    return cleanup;
  };
  let cleanup = await start();
  return {
    endpoint,
    dir,
    files,
    root,
    proxy,
    hub,
    foreign,
    pid: () => proc.pid,
    async restartEmpty() {
      process.kill(proc.pid, 'SIGKILL');
      await proc.stop();
      await cleanup();
      cleanup = await start();
    },
    async stop() {
      await proc.stop();
      await cleanup();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
