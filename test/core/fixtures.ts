import {
  cachingKeyFactory,
  existingPkiFromSecrets,
  type KeyFactory,
  type NodePool,
  parsePoolSpiritSpec,
  type RenderInput,
  type ResolvedPoolSpiritSpec,
  renderPoolSpirit,
} from '../../core/index.ts';
import * as x509 from '../../shared/x509.ts';

export const NOW = new Date('2026-01-15T12:00:00Z');
export const DAY = 86_400_000;

/** One key cache for the whole test file: key generation is not what these tests exercise. */
export const keys: KeyFactory & { generated: number } = cachingKeyFactory();

export function nodePool(name = 'hangzhou', extra: Partial<NodePool> = {}): NodePool {
  return {
    apiVersion: 'apps.openyurt.io/v1beta2',
    kind: 'NodePool',
    metadata: { name, uid: `uid-np-${name}`, ...extra.metadata },
    spec: { type: 'Edge', ...extra.spec },
  };
}

export function spec(raw: Record<string, unknown> = {}): ResolvedPoolSpiritSpec {
  const parsed = parsePoolSpiritSpec({ nodePool: 'hangzhou', ...raw });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.spec;
}

let clusterCa: Promise<string> | undefined;
/** A stand-in for the cluster CA that signs node certificates. */
export function clusterCaPem(): Promise<string> {
  clusterCa ??= (async () => {
    const pair = await keys.generateKeyPair('cluster-ca');
    const cert = await x509.X509CertificateGenerator.createSelfSigned(
      {
        name: 'CN=kubernetes',
        keys: pair,
        notBefore: NOW,
        notAfter: new Date(NOW.getTime() + 3650 * DAY),
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
      },
      keys.crypto,
    );
    return cert.toString('pem');
  })();
  return clusterCa;
}

let base: Promise<Record<string, string>> | undefined;
/** The PKI of one fresh render, reused by default so most tests skip issuing certificates. */
function basePki(): Promise<Record<string, string>> {
  base ??= (async () => {
    const r = await renderPoolSpirit(await renderInput({ existingPki: undefined }));
    const secrets = r.objects.filter((o) => o.kind === 'Secret');
    return existingPkiFromSecrets(secrets, r.names);
  })();
  return base;
}

/** Render input for pool hangzhou; pass `existingPki: undefined` explicitly to issue a fresh PKI. */
export async function renderInput(
  overrides: Partial<RenderInput> & { raw?: Record<string, unknown> } = {},
): Promise<RenderInput> {
  const { raw, ...rest } = overrides;
  return {
    existingPki: 'existingPki' in overrides ? undefined : await basePki(),
    poolSpirit: { metadata: { name: 'hangzhou', uid: 'uid-ps-hangzhou' }, spec: spec(raw) },
    nodePool: nodePool(),
    cluster: { caBundlePem: await clusterCaPem(), clusterDomain: 'cluster.local', namespace: 'pool-spirit-system' },
    now: NOW,
    keys,
    ...rest,
  };
}
