import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeTransport, type ExecRunner, type KubeTransport } from '../../../adapters/kubernetes/http/index.ts';
import { issueClientCertificate } from '../../../local/kube-api/index.ts';
import { makePki, startServer, type Pki, type TestServer } from './fixtures.ts';

const API_VERSION = 'client.authentication.k8s.io/v1';
const credential = (status: Record<string, string>) => JSON.stringify({ apiVersion: API_VERSION, kind: 'ExecCredential', status });
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const anHourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

describe('exec credentials', () => {
  let pki: Pki;
  let server: TestServer;
  let dir: string;
  let unauthorizedOnce = false;
  const transports: KubeTransport[] = [];
  const track = (t: KubeTransport) => (transports.push(t), t);

  beforeAll(async () => {
    pki = await makePki();
    dir = await mkdtemp(join(tmpdir(), 'kube-http-exec-'));
    server = await startServer({
      tls: { serving: pki.serving, clientCa: pki.ca.certPem },
      handler: (_req, res, seen) => {
        const status = unauthorizedOnce ? 401 : 200;
        unauthorizedOnce = false;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ auth: seen.headers.authorization ?? null, cn: seen.clientCn ?? null }));
      },
    });
  });
  afterAll(async () => {
    for (const t of transports) t.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  function fakeRunner(outputs: Array<() => string>) {
    const calls: Array<{ command: string; args: string[]; env: NodeJS.ProcessEnv }> = [];
    const runner: ExecRunner = async (command, args, env) => {
      calls.push({ command, args, env });
      const next = outputs.length > 1 ? outputs.shift()! : outputs[0];
      return next();
    };
    return { calls, runner };
  }

  const get = (t: KubeTransport) => t.request<{ auth: string | null; cn: string | null }>({ method: 'GET', path: '/x' });

  it('runs the command with env and KUBERNETES_EXEC_INFO, and caches a token until it expires', async () => {
    const { calls, runner } = fakeRunner([() => credential({ token: 'exec-tok-1', expirationTimestamp: inAnHour() })]);
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, token: 'static-ignored', exec: { command: 'get-token', args: ['--cluster', 'c1'], env: [{ name: 'CLUSTER', value: 'c1' }] } }, { execRunner: runner }));
    const results = await Promise.all([get(t), get(t), get(t)]);
    expect(results.map((r) => r.auth)).toEqual(['Bearer exec-tok-1', 'Bearer exec-tok-1', 'Bearer exec-tok-1']);
    await get(t);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ command: 'get-token', args: ['--cluster', 'c1'] });
    expect(calls[0].env.CLUSTER).toBe('c1');
    expect(calls[0].env.PATH).toBe(process.env.PATH);
    expect(JSON.parse(calls[0].env.KUBERNETES_EXEC_INFO!)).toEqual({ apiVersion: API_VERSION, kind: 'ExecCredential', spec: { interactive: false } });
  });

  it('runs the command again once the credential has expired, and after a 401', async () => {
    let n = 0;
    const { calls, runner } = fakeRunner([() => credential({ token: `tok-${++n}`, expirationTimestamp: anHourAgo() })]);
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: 'get-token' } }, { execRunner: runner }));
    expect((await get(t)).auth).toBe('Bearer tok-1');
    expect((await get(t)).auth).toBe('Bearer tok-2');
    expect(calls).toHaveLength(2);

    const forever = fakeRunner([() => credential({ token: `tok-${++n}` })]);
    const t2 = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: 'get-token' } }, { execRunner: forever.runner }));
    await get(t2);
    unauthorizedOnce = true;
    await expect(get(t2)).rejects.toMatchObject({ code: 401 });
    await get(t2);
    await get(t2);
    expect(forever.calls).toHaveLength(2);
  });

  it('presents the client certificate the plugin returns, and a new one when it changes', async () => {
    const bob = await issueClientCertificate(pki.ca, { user: 'bob' });
    const carol = await issueClientCertificate(pki.ca, { user: 'carol' });
    const { runner } = fakeRunner([
      () => credential({ clientCertificateData: bob.certPem, clientKeyData: bob.keyPem, expirationTimestamp: anHourAgo() }),
      () => credential({ clientCertificateData: carol.certPem, clientKeyData: carol.keyPem }),
    ]);
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: 'get-cert' } }, { execRunner: runner }));
    const before = server.connections;
    expect(await get(t)).toEqual({ auth: null, cn: 'bob' });
    expect(await get(t)).toEqual({ auth: null, cn: 'carol' });
    expect(await get(t)).toEqual({ auth: null, cn: 'carol' });
    expect(server.connections - before).toBe(2);
  });

  it.each([
    ['not JSON', 'token: exec-secret-xyz', /expected JSON on stdout/],
    ['another kind', JSON.stringify({ kind: 'Secret', token: 'exec-secret-xyz' }), /expected kind ExecCredential/],
    ['another apiVersion', JSON.stringify({ apiVersion: 'v9', kind: 'ExecCredential', status: { token: 'exec-secret-xyz' } }), /expected apiVersion client.authentication.k8s.io\/v1, got v9/],
    ['no credential', credential({}), /expected a token or a client certificate/],
    ['a cert without key', credential({ clientCertificateData: 'exec-secret-xyz' }), /together/],
    ['a bad expiry', credential({ token: 'exec-secret-xyz', expirationTimestamp: 'soon' }), /expirationTimestamp/],
  ])('refuses output that is %s, naming the command but not the output', async (_what, output, expected) => {
    const { runner } = fakeRunner([() => output]);
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: 'my-plugin' } }, { execRunner: runner }));
    const err = (await get(t).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^exec credential command "my-plugin" did not print an ExecCredential: /);
    expect(err.message).toMatch(expected);
    expect(err.message).not.toContain('exec-secret-xyz');
  });

  it('runs a real script; a failing one is named with its exit code, never its output', async () => {
    const ok = join(dir, 'ok-plugin.sh');
    await writeFile(ok, `#!/bin/sh\nprintf '{"apiVersion":"${API_VERSION}","kind":"ExecCredential","status":{"token":"%s-%s"}}' "$TOKEN_PREFIX" "$(echo "$KUBERNETES_EXEC_INFO" | grep -c '"interactive":false')"\n`);
    await chmod(ok, 0o755);
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: ok, env: [{ name: 'TOKEN_PREFIX', value: 'real' }] } }));
    expect((await get(t)).auth).toBe('Bearer real-1');

    const failing = join(dir, 'failing-plugin.sh');
    await writeFile(failing, '#!/bin/sh\necho "exec-secret-stdout"\necho "exec-secret-stderr" >&2\nexit 3\n');
    await chmod(failing, 0o755);
    const bad = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: failing, args: ['--flag'] } }));
    const err = (await get(bad).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(`exec credential command "${failing}" failed: exit code 3`);
    const missing = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, exec: { command: join(dir, 'nope') } }));
    await expect(get(missing)).rejects.toThrow(`exec credential command "${join(dir, 'nope')}" failed: not found`);
  });
});
