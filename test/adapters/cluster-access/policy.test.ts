import { describe, expect, it } from 'vitest';
import {
  AccessPolicyError,
  checkKubeconfig,
  checkServerUrl,
  serverUrlProblem,
} from '../../../adapters/cluster-access/policy.ts';

const METADATA = /link-local or cloud metadata/;
const NOT_HTTPS = /expected (an )?https/;

describe('cluster access policy: server URLs', () => {
  it.each([
    'https://abc.gr7.eu-west-1.eks.amazonaws.com',
    'https://10.0.0.1:6443/prefix',
    'https://[2001:db8::1]:6443',
    'https://127.0.0.1:1',
    // Plain http only to loopback: what the local stack's clusters serve on.
    'http://127.0.0.1:6443',
    'http://127.9.9.9',
    'http://[::1]:8080',
    'http://localhost:8080',
    'http://LOCALHOST.:8080',
    'http://[::ffff:127.0.0.1]:8080',
  ])('accepts %s', (url) => {
    expect(serverUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['http://169.254.169.254/latest', METADATA],
    ['https://169.254.169.254/latest', METADATA],
    ['http://169.254.170.2/v2/credentials', METADATA],
    ['https://169.254.0.1', METADATA],
    // The same address in decimal, hex, octal, shortened and trailing-dot spellings.
    ['http://2852039166/', METADATA],
    ['http://0xa9fea9fe/', METADATA],
    ['http://0xA9.0xFE.0xA9.0xFE/', METADATA],
    ['http://0251.0376.0251.0376/', METADATA],
    ['http://169.254.43518/', METADATA],
    ['http://169.254.169.254./', METADATA],
    // IPv6: EC2's IPv6 metadata, link-local, IPv4-mapped / NAT64 / IPv4-compatible forms of 169.254.x.y.
    ['http://[fd00:ec2::254]/', METADATA],
    ['https://[FD00:EC2:0:0:0:0:0:254]/', METADATA],
    ['https://[fe80::1]/', METADATA],
    ['https://[febf::1]/', METADATA],
    ['http://[::ffff:169.254.169.254]/', METADATA],
    ['http://[::ffff:a9fe:a9fe]/', METADATA],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', METADATA],
    ['http://[64:ff9b::169.254.169.254]/', METADATA],
    ['http://[::169.254.169.254]/', METADATA],
    // Metadata host names, and other metadata/"this host" addresses.
    ['http://metadata.google.internal/computeMetadata/v1/', METADATA],
    ['https://METADATA.GOOGLE.INTERNAL./', METADATA],
    ['http://metadata/', METADATA],
    ['http://instance-data/latest', METADATA],
    ['http://100.100.100.200/latest/meta-data', METADATA],
    ['https://0.0.0.0:6443', METADATA],
    ['https://[::]:6443', METADATA],
    // Plain http anywhere but loopback.
    ['http://10.0.0.1:8080', NOT_HTTPS],
    ['http://example.com', NOT_HTTPS],
    ['http://localhost.example.com', NOT_HTTPS],
    ['http://127.0.0.1.nip.io', NOT_HTTPS],
    ['ftp://c1', NOT_HTTPS],
    ['file:///etc/passwd', NOT_HTTPS],
    ['not a url', NOT_HTTPS],
    ['', NOT_HTTPS],
    ['https://user:s3cret@c1.example', /no user name or password/],
  ])('refuses %s', (url, why) => {
    expect(serverUrlProblem(url)).toMatch(why);
  });

  it('names the field and never the URL', () => {
    const err = (() => {
      try {
        checkServerUrl('https://user:s3cret-4242@169.254.169.254/', '--url');
      } catch (e) {
        return e as AccessPolicyError;
      }
    })();
    expect(err).toBeInstanceOf(AccessPolicyError);
    expect(err!.field).toBe('--url');
    expect(err!.message.startsWith('--url: ')).toBe(true);
    expect(err!.message).not.toContain('s3cret-4242');
    expect(err!.message).not.toContain('169.254.169.254');
  });
});

describe('cluster access policy: kubeconfig documents', () => {
  const doc = (user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://c1:6443' }) => ({
    clusters: [
      { name: 'ok', cluster: { server: 'https://ok:6443' } },
      { name: 'c', cluster },
    ],
    users: [
      { name: 'ok', user: { token: 't' } },
      { name: 'u', user },
    ],
    contexts: [{ name: 'a', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'a',
  });
  const fieldOf = (d: unknown) => {
    try {
      checkKubeconfig(d);
    } catch (e) {
      expect(e).toBeInstanceOf(AccessPolicyError);
      return (e as AccessPolicyError).field;
    }
    return undefined;
  };

  it('accepts inline credentials', () => {
    expect(
      fieldOf(
        doc(
          { token: 't', 'client-certificate-data': 'QQ==', 'client-key-data': 'QQ==' },
          { server: 'https://c1', 'certificate-authority-data': 'QQ==' },
        ),
      ),
    ).toBeUndefined();
  });

  it.each([
    ['users[1].user.exec', { exec: { command: '/bin/sh', args: ['-c', 'id'] } }, undefined],
    ['users[1].user.auth-provider', { 'auth-provider': { name: 'oidc' } }, undefined],
    [
      'users[1].user.client-certificate',
      { 'client-certificate': '/etc/ssl/c.crt', 'client-key-data': 'QQ==' },
      undefined,
    ],
    ['users[1].user.client-key', { 'client-key': '/etc/ssl/c.key' }, undefined],
    ['users[1].user.tokenFile', { tokenFile: '/var/run/secrets/token' }, undefined],
    ['clusters[1].cluster.certificate-authority', {}, { server: 'https://c1', 'certificate-authority': '/etc/ca.crt' }],
    ['clusters[1].cluster.server', {}, { server: 'http://169.254.169.254' }],
    ['clusters[1].cluster.proxy-url', {}, { server: 'https://c1', 'proxy-url': 'http://169.254.169.254' }],
  ])('refuses %s', (field, user, cluster) => {
    expect(fieldOf(doc(user, cluster))).toBe(field);
  });
});
