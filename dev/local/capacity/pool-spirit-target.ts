/**
 * Starts the capacity probe's `--local` target (probe/capacity/pool-spirit-target.ts says what it is): the
 * rendered pool-spirit's etcd and kube-apiserver as the built binaries, through the real control plane's
 * process runner. It lives in dev/local/ so that probe/, which ships, does not import the harness.
 */
import { join } from 'node:path';
import { createEtcdAccess, type EtcdAccess } from '../../../agent/adapters/etcd.ts';
import {
  type KubeObject,
  type NodePool,
  parsePoolSpiritSpec,
  renderPoolSpirit,
  webCryptoKeyFactory,
} from '../../../core/index.ts';
import { VOLUMES } from '../../../core/render/containers.ts';
import { certFile, keyFile, PKI_FILES } from '../../../core/render/pki.ts';
import { kubeHttpForTls } from '../../../probe/capacity/kube-http.ts';
import {
  type PoolSpiritTarget,
  type PoolSpiritTargetOptions,
  withProfile,
} from '../../../probe/capacity/pool-spirit-target.ts';
import * as x509 from '../../../shared/x509.ts';
import { type PodSpec, type RealControlPlane, startRealControlPlane } from '../kubelet/process/real-control-plane.ts';

const POOL = 'capacity-probe';
const NAMESPACE = 'pool-spirit-system';
const AGENT_ETCD_VOLUME = VOLUMES.agentEtcdClient;
const DAY_MS = 86_400_000;

export async function startPoolSpiritTarget(o: PoolSpiritTargetOptions): Promise<PoolSpiritTarget> {
  const rendered = await renderProbePod();
  const pod = withProfile(rendered.pod, o.etcd.flags, o.apiServer, o.apiServerFlags);
  const plane = await startRealControlPlane({ pod, secret: rendered.secret, log: o.log });
  try {
    const agent = await rendered.secret(rendered.agentSecret);
    const decode = (key: string) => Buffer.from(agent[key] ?? missingKey(rendered.agentSecret, key), 'base64');
    const api = kubeHttpForTls(
      plane.apiServerUrl,
      { ca: plane.caPem, cert: decode('agent.crt'), key: decode('agent.key') },
      o.http,
    );
    const access = etcdAccessFor(plane);
    return {
      api,
      etcd: { pid: plane.pids.etcd, dataDir: plane.etcdDataDir, access },
      apiServerPid: plane.pids.apiServer,
      args: { etcd: containerArgs(pod, 'etcd'), apiServer: containerArgs(pod, 'kube-apiserver') },
      async stop() {
        api.close();
        access.close();
        await plane.stop();
      },
    };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

function containerArgs(pod: PodSpec, name: string): string[] {
  return pod.containers.find((c) => c.name === name)?.args ?? [];
}

function etcdAccessFor(plane: RealControlPlane): EtcdAccess {
  const dir = plane.volumeDir(AGENT_ETCD_VOLUME);
  if (!dir) throw new Error(`rendered pod has no volume ${AGENT_ETCD_VOLUME} (the agent's etcd client certificate)`);
  return createEtcdAccess(
    {
      endpoints: [plane.etcdClientUrl],
      caFile: join(dir, PKI_FILES.etcdCaCert),
      certFile: join(dir, certFile('apiserver-etcd-client')),
      keyFile: join(dir, keyFile('apiserver-etcd-client')),
    },
    undefined,
  );
}

function missingKey(secret: string, key: string): never {
  throw new Error(`rendered Secret ${secret} has no key "${key}"`);
}

type SecretObject = KubeObject & { data?: Record<string, string> };

/** Renders the default PoolSpirit for a probe pool, as the reconciler would, with a fresh PKI. */
async function renderProbePod() {
  const parsed = parsePoolSpiritSpec({ nodePool: POOL });
  if (!parsed.ok) throw new Error(`probe PoolSpirit spec: ${JSON.stringify(parsed.issues)}`);
  const keys = webCryptoKeyFactory();
  const now = new Date();
  const nodePool: NodePool = {
    apiVersion: 'apps.openyurt.io/v1beta2',
    kind: 'NodePool',
    metadata: { name: POOL, uid: `uid-np-${POOL}` },
    spec: { type: 'Edge' },
  };
  const out = await renderPoolSpirit({
    poolSpirit: { metadata: { name: POOL, uid: `uid-ps-${POOL}` }, spec: parsed.spec },
    nodePool,
    cluster: { caBundlePem: await selfSignedCaPem(keys, now), clusterDomain: 'cluster.local', namespace: NAMESPACE },
    now,
    keys,
  });
  const deployment = out.objects.find((o) => o.kind === 'Deployment') as
    | (KubeObject & { spec: { template: { spec: PodSpec } } })
    | undefined;
  if (!deployment) throw new Error('rendered PoolSpirit has no Deployment');
  const secrets = new Map(
    out.objects.filter((o) => o.kind === 'Secret').map((s) => [s.metadata.name, (s as SecretObject).data ?? {}]),
  );
  const secret = async (name: string) =>
    secrets.get(name) ?? Promise.reject(new Error(`rendered PoolSpirit has no Secret ${name}`));
  return { pod: deployment.spec.template.spec, secret, agentSecret: out.names.agentSecret };
}

/** A stand-in for the host cluster's CA (it would sign YurtHub node certificates; the probe presents none). */
async function selfSignedCaPem(keys: ReturnType<typeof webCryptoKeyFactory>, now: Date): Promise<string> {
  const pair = await keys.generateKeyPair('cluster-ca');
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=capacity-probe-cluster-ca',
      keys: pair,
      notBefore: now,
      notAfter: new Date(now.getTime() + DAY_MS),
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
    },
    keys.crypto,
  );
  return cert.toString('pem');
}
