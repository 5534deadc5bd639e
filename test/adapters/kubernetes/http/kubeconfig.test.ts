import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { connectionFromKubeconfig, KubeconfigError } from '../../../../adapters/kubernetes/http/kubeconfig.ts';
import { createCertificateAuthority, issueClientCertificate } from '../../../../dev/local/pki.ts';

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
const SECRETS = [
  TOKEN,
  NOT_PEM,
  firstBodyLine(CA),
  firstBodyLine(CERT),
  firstBodyLine(KEY),
  b64(CERT).slice(0, 40),
  b64(KEY).slice(0, 40),
  'exec-secret-arg',
];

type Obj = Record<string, unknown>;
function kubeconfig(cluster: Obj, user: Obj, extra: Obj = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'c1', cluster },
      { name: 'c2', cluster: { server: 'https://c2.example:6443' } },
    ],
    users: [{ name: 'u1', user }],
    contexts: [
      { name: 'a', context: { cluster: 'c1', user: 'u1' } },
      { name: 'b', context: { cluster: 'c2' } },
    ],
    'current-context': 'a',
    ...extra,
  });
}
const strict = {};

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
      {
        server: 'https://1.2.3.4:6443/prefix',
        'certificate-authority-data': b64(CA),
        'tls-server-name': 'api.internal',
      },
      { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY), token: TOKEN },
    );
    expect(connectionFromKubeconfig(text, strict)).toEqual({
      server: 'https://1.2.3.4:6443/prefix',
      caPem: CA,
      tlsServerName: 'api.internal',
      token: TOKEN,
      clientCertPem: CERT,
      clientKeyPem: KEY,
    });
  });

  it('refuses file references even when the files exist, without reading them', () => {
    const text = kubeconfig(
      { server: 'https://k:443' },
      { 'client-certificate': 'pki/client.crt', 'client-key': join(dir, 'pki/client.key') },
    );
    const e = refusal(text, strict);
    expect(e.field).toBe('users[0].user.client-certificate');
    expect(e.refused).toBe(true);
    expect(e.message).not.toContain(dir);
  });

  it('picks the given context over current-context; a context without user is anonymous', () => {
    const text = kubeconfig({ server: 'https://c1:6443' }, { token: TOKEN });
    expect(connectionFromKubeconfig(text, { ...strict, context: 'b' })).toEqual({ server: 'https://c2.example:6443' });
  });

  it('reads insecure-skip-tls-verify; refuses exec in any user, even one no context uses', () => {
    const text = kubeconfig({ server: 'https://c1:6443', 'insecure-skip-tls-verify': true }, { token: TOKEN });
    expect(connectionFromKubeconfig(text, strict)).toEqual({
      server: 'https://c1:6443',
      insecureSkipTlsVerify: true,
      token: TOKEN,
    });
    const exec = { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['exec-secret-arg'] };
    const unused = stringify({
      ...parse(text),
      users: [
        { name: 'u1', user: { token: TOKEN } },
        { name: 'other', user: { exec } },
      ],
    });
    expect(refusal(unused, strict).field).toBe('users[1].user.exec');
  });

  it('bounds the document: size, aliases and depth', () => {
    const big = kubeconfig({ server: 'https://c1' }, { token: 'x'.repeat(300 * 1024) });
    expect(refusal(big, strict).field).toBe('(document)');
    const aliases = `clusters:\n- name: c1\n  cluster: &c { server: "https://c1" }\n- name: c2\n  cluster: *c\ncontexts: [{ name: a, context: { cluster: c1 } }]\ncurrent-context: a\n`;
    expect(refusal(aliases, strict).message).toMatch(/aliases/);
    const deep = `current-context: a\nextensions: ${'['.repeat(40)}${']'.repeat(40)}\n`;
    expect(refusal(deep, strict).message).toMatch(/nested at most/);
  });

  it('names a missing context and lists the ones there are', () => {
    const e = refusal(kubeconfig({ server: 'https://c1' }, {}), { ...strict, context: 'foo' });
    expect(e.field).toBe('contexts');
    expect(e.message).toBe('contexts: no context "foo" (have: a, b)');
  });

  const cases: Array<[string, string, Obj, Obj, Obj?]> = [
    [
      'a file CA',
      'clusters[0].cluster.certificate-authority',
      { server: 'https://c1', 'certificate-authority': 'pki/ca.crt' },
      {},
    ],
    [
      'a client-certificate file',
      'users[0].user.client-certificate',
      { server: 'https://c1' },
      { 'client-certificate': 'pki/client.crt', 'client-key-data': b64(KEY) },
    ],
    [
      'a client-key file',
      'users[0].user.client-key',
      { server: 'https://c1' },
      { 'client-certificate-data': b64(CERT), 'client-key': 'pki/client.key' },
    ],
    ['a tokenFile', 'users[0].user.tokenFile', { server: 'https://c1' }, { tokenFile: 'token' }],
    [
      'exec',
      'users[0].user.exec',
      { server: 'https://c1' },
      { token: TOKEN, exec: { command: 'x', args: ['exec-secret-arg'] } },
    ],
    ['exec without command', 'users[0].user.exec', { server: 'https://c1' }, { exec: { args: ['exec-secret-arg'] } }],
    [
      'auth-provider',
      'users[0].user.auth-provider',
      { server: 'https://c1' },
      { 'auth-provider': { name: 'gcp', config: { 'access-token': TOKEN } } },
    ],
    ['a metadata server', 'clusters[0].cluster.server', { server: 'http://169.254.169.254/latest' }, { token: TOKEN }],
    ['plain http off loopback', 'clusters[0].cluster.server', { server: 'http://10.0.0.1:8080' }, { token: TOKEN }],
    ['basic auth', 'users[u1].password', { server: 'https://c1' }, { password: TOKEN }],
    ['a server that is not an http(s) URL', 'clusters[0].cluster.server', { server: 'ftp://c1' }, { token: TOKEN }],
    ['no server', 'clusters[0].cluster.server', {}, {}],
    [
      'a cert without its key',
      'users[u1].client-key',
      { server: 'https://c1' },
      { 'client-certificate-data': b64(CERT) },
    ],
    [
      'a key without its cert',
      'users[u1].client-certificate',
      { server: 'https://c1' },
      { 'client-key-data': b64(KEY) },
    ],
    [
      'CA data that is not base64 PEM',
      'clusters[c1].certificate-authority-data',
      { server: 'https://c1', 'certificate-authority-data': NOT_PEM },
      {},
    ],
    [
      'key data that is not a PEM key',
      'users[u1].client-key-data',
      { server: 'https://c1' },
      { 'client-certificate-data': b64(CERT), 'client-key-data': b64(TOKEN) },
    ],
    ['a token that is not a string', 'users[u1].token', { server: 'https://c1' }, { token: 4242 }],
    [
      'insecure plus a CA',
      'clusters[c1].insecure-skip-tls-verify',
      { server: 'https://c1', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64(CA) },
      {},
    ],
    ['no current-context', 'current-context', { server: 'https://c1' }, {}, { 'current-context': '' }],
    [
      'a context naming a missing user',
      'users',
      { server: 'https://c1' },
      {},
      { contexts: [{ name: 'a', context: { cluster: 'c1', user: 'ghost' } }] },
    ],
  ];
  it.each(cases)('refuses %s, naming %s', (_what, field, cluster, user, extra) => {
    const e = refusal(kubeconfig(cluster, user, extra ?? {}), strict);
    expect(e.field).toBe(field);
  });

  it('never echoes YAML that fails to parse', () => {
    const bad = refusal(`users: [ {token: ${TOKEN}\n  - :`, strict);
    expect(bad.field).toBe('(document)');
  });
});
