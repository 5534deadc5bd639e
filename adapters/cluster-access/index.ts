/**
 * Resolves a cluster registry entry to a ClusterConnection (server, trust, credentials) for the functions'
 * apiserver client (adapters/kubernetes/http).
 *
 * - `kubeconfig-file` / `url`: local clusters (the local stack, kind, a developer's kubeconfig).
 * - `eks`: a short-lived IAM token signed with the function's own role credentials (eks-token.ts).
 * - `secret`: a kubeconfig kept in Secrets Manager.
 *
 * Every load passes the access policy (policy.ts), whatever wrote the registration or the secret: no exec
 * or auth-provider credentials, no file references, https servers (plain http to loopback only), no
 * link-local or metadata addresses. A kubeconfig must not be able to make a function run a command, or
 * read a local file and send it to a server the kubeconfig names. Refusals are ClusterAccessError
 * 'invalid' naming the field; they do not go away on a retry.
 *
 * Credentials are only ever held in memory: never read from or put into environment variables, never
 * logged, never in error messages (see errors.ts). Resolved configs are cached per warm container for a
 * few minutes so a burst of reconciles does not fetch a secret or sign a token each time.
 */
import { open } from 'node:fs/promises';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterConnection } from '../kubernetes/http/index.ts';
import type { ClusterRegistration } from '../state-table/registry.ts';
import { EKS_TOKEN_LIFETIME_MS, eksToken } from './eks-token.ts';
import type { ClusterAccessFailure } from './errors.ts';
import { ClusterAccessError } from './errors.ts';
import {
  AccessPolicyError,
  checkKubeconfigSize,
  checkServerUrl,
  KUBECONFIG_MAX_BYTES,
  oversizedKubeconfig,
} from './policy.ts';
import type { SecretSource } from './secrets.ts';

export type { EksToken, EksTokenInput } from './eks-token.ts';
export { CLUSTER_ID_HEADER, EKS_TOKEN_PREFIX, eksToken } from './eks-token.ts';
export type { ClusterAccessFailure } from './errors.ts';
export { ClusterAccessError } from './errors.ts';
export {
  AccessPolicyError,
  checkKubeconfig,
  checkServerUrl,
  KUBECONFIG_MAX_BYTES,
  serverUrlProblem,
} from './policy.ts';
export type { SecretSource } from './secrets.ts';
export { secretsManagerSource } from './secrets.ts';

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
  connectionFor(cluster: ClusterRegistration): Promise<ClusterConnection>;
  /** Drops a cached config (e.g. after a 401 from the cluster). */
  forget(clusterId: string): void;
}

const DEFAULT_CACHE_TTL_MS = 5 * 60 * 1000;
/** Re-sign an EKS token when less than this is left of its 15 minutes (a reconcile must finish on it). */
const EKS_TOKEN_MARGIN_MS = 5 * 60 * 1000;

export function createClusterAccess(options: ClusterAccessOptions = {}): ClusterAccessResolver {
  const now = options.now ?? (() => new Date());
  const ttl = options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
  const cache = new Map<string, { connection: ClusterConnection; until: number; fingerprint: string }>();

  async function resolve(cluster: ClusterRegistration): Promise<{ connection: ClusterConnection; until: number }> {
    const access = cluster.access;
    const fail = (reason: ClusterAccessFailure, field?: string, rule?: string) =>
      new ClusterAccessError(cluster.id, access.kind, reason, field, rule);
    const checkUrl = (value: string, field: string) => {
      try {
        checkServerUrl(value, field);
      } catch (err) {
        if (err instanceof AccessPolicyError) throw fail('invalid', err.field, err.rule);
        throw err;
      }
    };
    const at = now().getTime();
    switch (access.kind) {
      case 'kubeconfig-file': {
        const text = await readBounded(access.path).catch((err: NodeJS.ErrnoException) => {
          if (err instanceof AccessPolicyError) throw fail('invalid', err.field, err.rule);
          throw fail(err.code === 'ENOENT' ? 'not-found' : err.code === 'EACCES' ? 'denied' : 'unavailable');
        });
        // The same rules as a secret: the path came from the registry, whoever wrote it.
        const connection = await fromKubeconfigText(text, access.context, fail);
        return { connection, until: at + ttl };
      }
      case 'url': {
        checkUrl(access.url, 'access.url');
        const connection: ClusterConnection = {
          server: access.url,
          caPem: pemOf(access.caData),
          insecureSkipTlsVerify: access.insecureSkipTlsVerify ?? false,
        };
        return { connection, until: at + ttl };
      }
      case 'eks': {
        checkUrl(access.endpoint, 'access.endpoint');
        if (!options.awsCredentials) throw fail('unavailable');
        const { token, expiresAt } = await eksToken({
          clusterName: access.clusterName,
          region: access.region,
          credentials: options.awsCredentials,
          now: new Date(at),
        }).catch(() => {
          throw fail('denied');
        });
        const connection: ClusterConnection = { server: access.endpoint, caPem: pemOf(access.caData), token };
        const tokenUsableUntil = expiresAt.getTime() - EKS_TOKEN_MARGIN_MS;
        return { connection, until: Math.min(at + ttl, tokenUsableUntil, at + EKS_TOKEN_LIFETIME_MS) };
      }
      case 'secret': {
        if (!options.secrets) throw fail('unavailable');
        const text = await options.secrets.getSecretString(access.secretId, access.region).catch((err: Error) => {
          throw fail(secretFailure(err));
        });
        try {
          checkKubeconfigSize(text);
        } catch (err) {
          throw fail('invalid', (err as AccessPolicyError).field, (err as AccessPolicyError).rule);
        }
        return { connection: await fromKubeconfigText(text, access.context, fail), until: at + ttl };
      }
    }
  }

  return {
    async connectionFor(cluster) {
      const fingerprint = JSON.stringify(cluster.access);
      const hit = cache.get(cluster.id);
      if (hit && hit.fingerprint === fingerprint && hit.until > now().getTime()) return hit.connection;
      const { connection, until } = await resolve(cluster);
      cache.set(cluster.id, { connection, until, fingerprint });
      return connection;
    },
    forget(clusterId) {
      cache.delete(clusterId);
    },
  };
}

async function fromKubeconfigText(
  text: string,
  context: string | undefined,
  fail: (reason: ClusterAccessFailure, field?: string, rule?: string) => ClusterAccessError,
): Promise<ClusterConnection> {
  // Loaded on first use: clusters reached by EKS token or URL never parse a kubeconfig, and the YAML parser
  // is then left out of a cold start (a chunk of its own in the function bundle).
  const { connectionFromKubeconfig, KubeconfigError } = await import('../kubernetes/http/kubeconfig.ts');
  try {
    return connectionFromKubeconfig(text, { context });
  } catch (err) {
    // The field path travels on, and the policy's own wording for a refusal; other reader messages may
    // quote names from the secret, so they stay behind.
    if (err instanceof KubeconfigError) throw fail('invalid', err.field, err.refused ? err.rule : undefined);
    throw fail('invalid');
  }
}

/** Reads at most KUBECONFIG_MAX_BYTES (+1 to tell an oversized file): a registry path may name anything. */
async function readBounded(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(KUBECONFIG_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > KUBECONFIG_MAX_BYTES) throw oversizedKubeconfig();
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Registry CA data is base64 of a PEM bundle, as in a kubeconfig's certificate-authority-data. */
function pemOf(caData: string | undefined): string | undefined {
  return caData ? Buffer.from(caData, 'base64').toString('utf8') : undefined;
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
