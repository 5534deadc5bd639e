/**
 * EKS IAM authentication token, as aws-iam-authenticator and `aws eks get-token` make it:
 * `k8s-aws-v1.` + base64url (no padding) of a presigned STS GetCallerIdentity URL whose signature covers
 * the header `x-k8s-aws-id: <cluster name>`. The apiserver's authenticator replays the URL against STS to
 * learn the caller's identity. `X-Amz-Expires=60` is what the authenticator sets; EKS itself accepts a
 * token for 15 minutes after its signing time, whatever that parameter says.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
export const PRESIGN_EXPIRES_SECONDS = 60;
/** EKS rejects a token this long after it was signed. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60 * 1000;

export interface EksTokenInput {
  clusterName: string;
  region: string;
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Signing time (injected for tests; defaults to now). */
  now?: Date;
}

export interface EksToken {
  token: string;
  /** When EKS stops accepting it. */
  expiresAt: Date;
}

/** RFC 3986 encoding, as SigV4 canonicalises query strings. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export async function eksToken(input: EksTokenInput): Promise<EksToken> {
  const now = input.now ?? new Date();
  const hostname = `sts.${input.region}.amazonaws.com`;
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host: hostname, [CLUSTER_ID_HEADER]: input.clusterName },
  });
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: 'sts',
    sha256: Sha256,
  });
  const signed = await signer.presign(request, { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: now });
  // Sorted query: the same bytes every time for the same input (the signature does not depend on order).
  const query = Object.entries(signed.query ?? {})
    .flatMap(([k, v]): [string, string][] =>
      Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v ?? '']],
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return {
    token: EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url'),
    expiresAt: new Date(now.getTime() + EKS_TOKEN_LIFETIME_MS),
  };
}
