/**
 * Resolves a cluster registry entry to a @kubernetes/client-node KubeConfig.
 *
 * - `kubeconfig-file` / `url`: local clusters (the local stack, kind, a developer's kubeconfig).
 * - `eks`: a short-lived IAM token signed with the function's own role credentials (eks-token.ts).
 * - `secret`: a kubeconfig kept in Secrets Manager. Exec and auth-provider users are refused there: a
 *   secret must not be able to make the function run a command.
 *
 * Credentials are only ever held in memory: never read from or put into environment variables, never
 * logged, never in error messages (see errors.ts). Resolved configs are cached per warm container for a
 * few minutes so a burst of reconciles does not fetch a secret or sign a token each time.
 */
import { readFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterAccess, ClusterRegistration } from '../state-table/registry.ts';
import { ClusterAccessError } from './errors.ts';
import type { ClusterAccessFailure } from './errors.ts';
import { eksToken, EKS_TOKEN_LIFETIME_MS } from './eks-token.ts';
import type { SecretSource } from './secrets.ts';

export { ClusterAccessError } from './errors.ts';
export type { ClusterAccessFailure } from './errors.ts';
export { eksToken, EKS_TOKEN_PREFIX, CLUSTER_ID_HEADER } from './eks-token.ts';
export type { EksToken, EksTokenInput } from './eks-token.ts';
export { secretsManagerSource } from './secrets.ts';
export type { SecretSource } from './secrets.ts';

export interface ClusterAccessOptions {
  /** The function's own AWS credentials (for EKS tokens); only needed when an `eks` cluster is registered. */
  awsCredentials?: AwsCredentialIdentityProvider;
  /** Where `secret` kubeconfigs come from; only needed when a `secret` cluster is registered. */
  secrets?: SecretSource;
  now?: () => Date;
  /** How long a resolved config is reused (EKS tokens are additionally re-signed well before they lapse). */
  cacheTtlMs?: number;
}

export interface ClusterAccessResolver {
  kubeConfigFor(cluster: ClusterRegistration): Promise<KubeConfig>;
  /** Drops a cached config (e.g. after a 401 from the cluster). */
  forget(clusterId: string): void;
}

const DEFAULT_CACHE_TTL_MS = 5 * 60 * 1000;
/** Re-sign an EKS token when less than this is left of its 15 minutes (a reconcile must finish on it). */
const EKS_TOKEN_MARGIN_MS = 5 * 60 * 1000;

export function createClusterAccess(options: ClusterAccessOptions = {}): ClusterAccessResolver {
  const now = options.now ?? (() => new Date());
  const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const cache = new Map<string, { kc: KubeConfig; until: number; fingerprint: string }>();

  async function resolve(cluster: ClusterRegistration): Promise<{ kc: KubeConfig; until: number }> {
    const access = cluster.access;
    const fail = (reason: ClusterAccessFailure) => new ClusterAccessError(cluster.id, access.kind, reason);
    const at = now().getTime();
    switch (access.kind) {
      case 'kubeconfig-file': {
        const text = await readFile(access.path, 'utf8').catch((err: NodeJS.ErrnoException) => {
          throw fail(err.code === 'ENOENT' ? 'not-found' : err.code === 'EACCES' ? 'denied' : 'unavailable');
        });
        return { kc: fromKubeconfigText(text, access.context, true, fail), until: at + ttl };
      }
      case 'url': {
        const kc = new KubeConfig();
        // client-node refuses plain http unless skipTLSVerify is set; over http there is no TLS to verify.
        const plainHttp = access.url.startsWith('http:');
        kc.loadFromClusterAndUser(
          {
            name: cluster.id,
            server: access.url,
            caData: access.caData,
            skipTLSVerify: plainHttp || (access.insecureSkipTlsVerify ?? false),
          },
          { name: `${cluster.id}-anonymous` },
        );
        return { kc, until: at + ttl };
      }
      case 'eks': {
        if (!options.awsCredentials) throw fail('unavailable');
        const { token, expiresAt } = await eksToken({
          clusterName: access.clusterName,
          region: access.region,
          credentials: options.awsCredentials,
          now: new Date(at),
        }).catch(() => {
          throw fail('denied');
        });
        const kc = new KubeConfig();
        kc.loadFromClusterAndUser(
          { name: cluster.id, server: access.endpoint, caData: access.caData, skipTLSVerify: false },
          { name: `${cluster.id}-iam`, token },
        );
        const tokenUsableUntil = expiresAt.getTime() - EKS_TOKEN_MARGIN_MS;
        return { kc, until: Math.min(at + ttl, tokenUsableUntil, at + EKS_TOKEN_LIFETIME_MS) };
      }
      case 'secret': {
        if (!options.secrets) throw fail('unavailable');
        const text = await options.secrets.getSecretString(access.secretId, access.region).catch((err: Error) => {
          throw fail(secretFailure(err));
        });
        return { kc: fromKubeconfigText(text, access.context, false, fail), until: at + ttl };
      }
    }
  }

  return {
    async kubeConfigFor(cluster) {
      const fingerprint = JSON.stringify(cluster.access);
      const hit = cache.get(cluster.id);
      if (hit && hit.fingerprint === fingerprint && hit.until > now().getTime()) return hit.kc;
      const { kc, until } = await resolve(cluster);
      cache.set(cluster.id, { kc, until, fingerprint });
      return kc;
    },
    forget(clusterId) {
      cache.delete(clusterId);
    },
  };
}

function fromKubeconfigText(
  text: string,
  context: string | undefined,
  allowExec: boolean,
  fail: (reason: ClusterAccessFailure) => ClusterAccessError,
): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    if (context) kc.setCurrentContext(context);
  } catch {
    throw fail('invalid');
  }
  const clusterEntry = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!clusterEntry?.server || !kc.getContextObject(kc.getCurrentContext())) throw fail('invalid');
  if (!allowExec && (user?.exec || user?.authProvider)) throw fail('invalid');
  if (clusterEntry.server.startsWith('http:') && !clusterEntry.skipTLSVerify) {
    // client-node refuses plain http unless skipTLSVerify is set (kubectl does not); there is no TLS to verify.
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c.name === clusterEntry.name ? { ...c, skipTLSVerify: true } : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return kc;
}

function secretFailure(err: Error): ClusterAccessFailure {
  switch (err?.name) {
    case 'ResourceNotFoundException':
      return 'not-found';
    case 'AccessDeniedException':
    case 'DecryptionFailure':
      return 'denied';
    case 'InvalidSecretValue':
    case 'InvalidRequestException':
    case 'InvalidParameterException':
      return 'invalid';
    default:
      return 'unavailable';
  }
}
