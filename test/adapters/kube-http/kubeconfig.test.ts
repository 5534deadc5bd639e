import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { connectionFromKubeconfig, KubeconfigError } from '../../../adapters/kubernetes/http/kubeconfig.ts';
import { createCertificateAuthority, issueClientCertificate } from '../../../local/kube-api/auth/test-pki.ts';

// Real PEM material, made for this run: nothing secret-shaped is committed.
const authority = await createCertificateAuthority('kubeconfig-test-ca', 1);
const client = await issueClientCertificate(authority, { user: 'kubeconfig-test', groups: [] }, 1);
const CA = authority.certPem;
const CERT = client.certPem;
const KEY = client.keyPem;
const TOKEN = 'tok-SECRET-4242';
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Base64 that decodes to something other than PEM. */
const NOT_PEM = b64('CA-SECRET-CERT');
/** The first base64 line of a PEM block. */
const firstBodyLine = (pem: string) => pem.trim().split('\n')[1];
/** Fragments that must never appear in an error message. */
const SECRETS = [TOKEN, NOT_PEM, firstBodyLine(CA), firstBodyLine(CERT), firstBodyLine(KEY), b64(CERT).slice(0, 40), b64(KEY).slice(0, 40), 'exec-secret-arg'];

type Obj = Record<string, unknown>;
function kubeconfig(cluster: Obj, user: Obj, extra: Obj = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c1', cluster }, { name: 'c2', cluster: { server: 'https://c2.example:6443' } }],
    users: [{ name: 'u1', user }],
    contexts: [{ name: 'a', context: { cluster: 'c1', user: 'u1' } }, { name: 'b', context: { cluster: 'c2' } }],
    'current-context': 'a',
    ...extra,
  });
}
const strict = { allowExec: false, allowFiles: false };
const permissive = { allowExec: true, allowFiles: true };

function refusal(text: string, options: Parameters<typeof connectionFromKubeconfig>[1]): KubeconfigError {
  try {
    connectionFromKubeconfig(text, options);
  } catch (err) {
    expect(err).toBeInstanceOf(KubeconfigError);
    const e = err as KubeconfigError;
    expect(e.name).toBe('KubeconfigError');
    expect(e.message.startsWith(`${e.field}: `)).toBe(true);
    for (const s of SECRETS) expect(e.message).not.toContain(s);
    return e;
  }
  throw new Error('expected a KubeconfigError');
}

describe('connectionFromKubeconfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-http-kc-'));
    await mkdir(join(dir, 'pki'));
    await writeFile(join(dir, 'pki/ca.crt'), CA);
    await writeFile(join(dir, 'pki/client.crt'), CERT);
    await writeFile(join(dir, 'pki/client.key'), KEY);
    await writeFile(join(dir, 'token'), `${TOKEN}\n`);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the embedded (data) forms of the current context', () => {
    const text = kubeconfig(
      { server: 'https://1.2.3.4:6443/prefix', 'certificate-authority-data': b64(CA), 'tls-server-name': 'api.internal' },
      { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY), token: TOKEN },
    );
    expect(connectionFromKubeconfig(text, strict)).toEqual({
      server: 'https://1.2.3.4:6443/prefix', caPem: CA, tlsServerName: 'api.internal', token: TOKEN, clientCertPem: CERT, clientKeyPem: KEY,
    });
  });

  it('reads file references relative to baseDir when files are allowed', () => {
    const text = kubeconfig(
      { server: 'https://k:443', 'certificate-authority': 'pki/ca.crt' },
      { 'client-certificate': 'pki/client.crt', 'client-key': join(dir, 'pki/client.key'), tokenFile: 'token' },
    );
    expect(connectionFromKubeconfig(text, { ...strict, allowFiles: true, baseDir: dir })).toEqual({
      server: 'https://k:443', caPem: CA, token: TOKEN, clientCertPem: CERT, clientKeyPem: KEY,
    });
  });

  it('picks the given context over current-context; a context without user is anonymous', () => {
    const text = kubeconfig({ server: 'https://c1:6443' }, { token: TOKEN });
    expect(connectionFromKubeconfig(text, { ...strict, context: 'b' })).toEqual({ server: 'https://c2.example:6443' });
  });

  it('reads exec and insecure-skip-tls-verify when allowed', () => {
    const exec = { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['eks', 'get-token'], env: [{ name: 'AWS_PROFILE', value: 'p' }], interactiveMode: 'Never' };
    const text = kubeconfig({ server: 'https://c1:6443', 'insecure-skip-tls-verify': true }, { exec });
    expect(connectionFromKubeconfig(text, { ...strict, allowExec: true })).toEqual({
      server: 'https://c1:6443', insecureSkipTlsVerify: true,
      exec: { command: 'aws', args: ['eks', 'get-token'], env: [{ name: 'AWS_PROFILE', value: 'p' }], apiVersion: 'client.authentication.k8s.io/v1beta1' },
    });
  });

  it('names a missing context and lists the ones there are', () => {
    const e = refusal(kubeconfig({ server: 'https://c1' }, {}), { ...strict, context: 'foo' });
    expect(e.field).toBe('contexts');
    expect(e.message).toBe('contexts: no context "foo" (have: a, b)');
  });

  const cases: Array<[string, string, Obj, Obj, Obj?, typeof strict?]> = [
    ['file CA without allowFiles', 'clusters[c1].certificate-authority', { server: 'https://c1', 'certificate-authority': 'pki/ca.crt' }, {}],
    ['client-certificate file without allowFiles', 'users[u1].client-certificate', { server: 'https://c1' }, { 'client-certificate': 'pki/client.crt', 'client-key-data': b64(KEY) }],
    ['client-key file without allowFiles', 'users[u1].client-key', { server: 'https://c1' }, { 'client-certificate-data': b64(CERT), 'client-key': 'pki/client.key' }],
    ['tokenFile without allowFiles', 'users[u1].tokenFile', { server: 'https://c1' }, { tokenFile: 'token' }],
    ['exec without allowExec', 'users[u1].exec', { server: 'https://c1' }, { token: TOKEN, exec: { command: 'x', args: ['exec-secret-arg'] } }],
    ['auth-provider even when all is allowed', 'users[u1].auth-provider', { server: 'https://c1' }, { 'auth-provider': { name: 'gcp', config: { 'access-token': TOKEN } } }, {}, permissive],
    ['basic auth', 'users[u1].password', { server: 'https://c1' }, { password: TOKEN }],
    ['a server that is not an http(s) URL', 'clusters[c1].server', { server: 'ftp://c1' }, { token: TOKEN }],
    ['no server', 'clusters[c1].server', {}, {}],
    ['a cert without its key', 'users[u1].client-key', { server: 'https://c1' }, { 'client-certificate-data': b64(CERT) }],
    ['a key without its cert', 'users[u1].client-certificate', { server: 'https://c1' }, { 'client-key-data': b64(KEY) }],
    ['CA data that is not base64 PEM', 'clusters[c1].certificate-authority-data', { server: 'https://c1', 'certificate-authority-data': NOT_PEM }, {}],
    ['key data that is not a PEM key', 'users[u1].client-key-data', { server: 'https://c1' }, { 'client-certificate-data': b64(CERT), 'client-key-data': b64(TOKEN) }],
    ['a token that is not a string', 'users[u1].token', { server: 'https://c1' }, { token: 4242 }],
    ['insecure plus a CA', 'clusters[c1].insecure-skip-tls-verify', { server: 'https://c1', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64(CA) }, {}],
    ['exec without command', 'users[u1].exec.command', { server: 'https://c1' }, { exec: { args: ['exec-secret-arg'] } }, {}, permissive],
    ['exec env not name/value', 'users[u1].exec.env', { server: 'https://c1' }, { exec: { command: 'x', env: [{ name: 'A', value: 1 }] } }, {}, permissive],
    ['no current-context', 'current-context', { server: 'https://c1' }, {}, { 'current-context': '' }],
    ['a context naming a missing user', 'users', { server: 'https://c1' }, {}, { contexts: [{ name: 'a', context: { cluster: 'c1', user: 'ghost' } }] }],
  ];
  it.each(cases)('refuses %s, naming %s', (_what, field, cluster, user, extra, options) => {
    const e = refusal(kubeconfig(cluster, user, extra ?? {}), { ...(options ?? strict), baseDir: dir });
    expect(e.field).toBe(field);
  });

  it('names an unreadable file by path and never echoes YAML that fails to parse', () => {
    const e = refusal(kubeconfig({ server: 'https://c1', 'certificate-authority': 'missing.crt' }, {}), { ...permissive, baseDir: dir });
    expect(e.message).toContain(join(dir, 'missing.crt'));
    expect(e.message).toContain('ENOENT');
    const bad = refusal(`users: [ {token: ${TOKEN}\n  - :`, permissive);
    expect(bad.field).toBe('(document)');
  });
});
