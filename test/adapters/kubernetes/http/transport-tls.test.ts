import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeTransport, type KubeTransport } from '../../../../adapters/kubernetes/http/index.ts';
import { makePki, type Pki, startServer, type TestServer } from './fixtures.ts';

describe('transport over TLS', () => {
  let pki: Pki;
  let server: TestServer;
  const transports: KubeTransport[] = [];
  const track = (t: KubeTransport) => {
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    pki = await makePki();
    server = await startServer({ tls: { serving: pki.serving, clientCa: pki.ca.certPem } });
  });
  afterAll(async () => {
    for (const t of transports) t.close();
    await server.close();
  });

  it('verifies the server against the given CA and sends a bearer token', async () => {
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, token: 'tok-1' }));
    await expect(t.request({ method: 'GET', path: '/api/v1/namespaces' })).resolves.toMatchObject({ ok: true });
    expect(server.seen.at(-1)!.headers.authorization).toBe('Bearer tok-1');
    expect(server.seen.at(-1)!.headers.accept).toBe('application/json');
    expect(server.seen.at(-1)!.clientCn).toBeUndefined();
  });

  it('rejects a server certificate from another CA, or with system roots', async () => {
    const wrong = track(createKubeTransport({ server: server.url, caPem: pki.otherCa.certPem }));
    await expect(wrong.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({
      code: expect.stringMatching(/CERT|SIGNATURE|ISSUER/),
    });
    const roots = track(createKubeTransport({ server: server.url }));
    await expect(roots.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({
      code: expect.stringMatching(/CERT|SIGNATURE|ISSUER/),
    });
  });

  it('skips verification only when told to', async () => {
    const t = track(createKubeTransport({ server: server.url, insecureSkipTlsVerify: true }));
    await expect(t.request({ method: 'GET', path: '/x' })).resolves.toMatchObject({ ok: true });
  });

  it('checks the certificate against tlsServerName instead of the URL host', async () => {
    const ok = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem, tlsServerName: 'localhost' }));
    await expect(ok.request({ method: 'GET', path: '/x' })).resolves.toMatchObject({ ok: true });
    const bad = track(
      createKubeTransport({ server: server.url, caPem: pki.ca.certPem, tlsServerName: 'elsewhere.example' }),
    );
    await expect(bad.request({ method: 'GET', path: '/x' })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('presents the client certificate', async () => {
    const t = track(
      createKubeTransport({
        server: server.url,
        caPem: pki.ca.certPem,
        clientCertPem: pki.client.certPem,
        clientKeyPem: pki.client.keyPem,
      }),
    );
    await expect(t.request({ method: 'GET', path: '/x' })).resolves.toMatchObject({ seen: { clientCn: 'alice' } });
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const before = server.connections;
    const t = track(createKubeTransport({ server: server.url, caPem: pki.ca.certPem }));
    for (let i = 0; i < 5; i++) await t.request({ method: 'GET', path: `/x/${i}` });
    expect(server.connections - before).toBe(1);
    expect(t.sent).toMatchObject({ total: 5, GET: 5 });
  });
});
