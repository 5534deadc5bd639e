import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EKS_TOKEN_PREFIX, eksToken } from '../../../adapters/cluster-access/index.ts';

/**
 * Fixed signing vector: AWS's documentation example credentials (AKIDEXAMPLE /
 * wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY), region us-east-1, cluster "my-cluster", signed at
 * 2015-08-30T12:36:00Z. The expected signature is derived below by hand from the SigV4 spec with
 * node:crypto (canonical request → string to sign → HMAC chain), independently of @smithy/signature-v4,
 * and the full token is pinned as a literal so any change in encoding shows up.
 */
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = new Date('2015-08-30T12:36:00Z');

const EXPECTED_SIGNATURE = '393dffdcf851beeb373f04f933b26ffa1d480490f11385a3dbd509617bb7cb79';
const EXPECTED_TOKEN =
  'k8s-aws-v1.aHR0cHM6Ly9zdHMudXMtZWFzdC0xLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eSZWZXJzaW9uPTIwMTEtMDYtMTUmWC1BbXotQWxnb3JpdGhtPUFXUzQtSE1BQy1TSEEyNTYmWC1BbXotQ3JlZGVudGlhbD1BS0lERVhBTVBMRSUyRjIwMTUwODMwJTJGdXMtZWFzdC0xJTJGc3RzJTJGYXdzNF9yZXF1ZXN0JlgtQW16LURhdGU9MjAxNTA4MzBUMTIzNjAwWiZYLUFtei1FeHBpcmVzPTYwJlgtQW16LVNpZ25hdHVyZT0zOTNkZmZkY2Y4NTFiZWViMzczZjA0ZjkzM2IyNmZmYTFkNDgwNDkwZjExMzg1YTNkYmQ1MDk2MTdiYjdjYjc5JlgtQW16LVNpZ25lZEhlYWRlcnM9aG9zdCUzQngtazhzLWF3cy1pZA';

function sha256hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
function hmac(key: Buffer | string, s: string): Buffer {
  return createHmac('sha256', key).update(s).digest();
}

function referenceSignature(): string {
  const query = [
    'Action=GetCallerIdentity',
    'Version=2011-06-15',
    'X-Amz-Algorithm=AWS4-HMAC-SHA256',
    'X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fsts%2Faws4_request',
    'X-Amz-Date=20150830T123600Z',
    'X-Amz-Expires=60',
    'X-Amz-SignedHeaders=host%3Bx-k8s-aws-id',
  ].join('&');
  const canonicalRequest = [
    'GET',
    '/',
    query,
    'host:sts.us-east-1.amazonaws.com',
    'x-k8s-aws-id:my-cluster',
    '',
    'host;x-k8s-aws-id',
    sha256hex(''),
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    '20150830T123600Z',
    '20150830/us-east-1/sts/aws4_request',
    sha256hex(canonicalRequest),
  ].join('\n');
  let key = hmac(`AWS4${credentials.secretAccessKey}`, '20150830');
  for (const part of ['us-east-1', 'sts', 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

describe('EKS IAM token', () => {
  it('matches the hand-derived SigV4 presignature and the pinned token', async () => {
    expect(referenceSignature()).toBe(EXPECTED_SIGNATURE);
    const { token, expiresAt } = await eksToken({ clusterName: 'my-cluster', region: 'us-east-1', credentials, now });
    expect(token).toBe(EXPECTED_TOKEN);
    expect(expiresAt.toISOString()).toBe('2015-08-30T12:51:00.000Z');
  });

  it('is base64url without padding of a presigned GetCallerIdentity URL bound to the cluster', async () => {
    const { token } = await eksToken({ clusterName: 'my-cluster', region: 'us-east-1', credentials, now });
    expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    const encoded = token.slice(EKS_TOKEN_PREFIX.length);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    const url = new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
    expect(url.host).toBe('sts.us-east-1.amazonaws.com');
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Signature')).toBe(EXPECTED_SIGNATURE);
  });

  it('carries a session token and binds a different cluster to a different signature', async () => {
    const a = await eksToken({
      clusterName: 'other',
      region: 'eu-west-1',
      credentials: { ...credentials, sessionToken: 'SESSION' },
      now,
    });
    const url = new URL(Buffer.from(a.token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('SESSION');
    expect(url.searchParams.get('X-Amz-Signature')).not.toBe(EXPECTED_SIGNATURE);
  });
});
