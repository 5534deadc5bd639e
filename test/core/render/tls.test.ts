import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPoolSpirit } from '../../../core/index.ts';
import { renderInput } from '../fixtures.ts';
import { pkiOf } from '../helpers.ts';

/**
 * The rendered PKI against a real TLS stack (Node's OpenSSL): the apiserver certificate is accepted for
 * 127.0.0.1 by a client trusting the pool CA, and the apiserver's client CA accepts the agent but not an
 * etcd-CA certificate.
 */
describe('rendered PKI over TLS', () => {
  let pki: Record<string, string>;
  let server: tls.Server;
  let port: number;
  const seen: string[] = [];

  beforeAll(async () => {
    pki = pkiOf(await renderPoolSpirit(await renderInput()));
    server = tls.createServer(
      {
        cert: pki['apiserver.crt'],
        key: pki['apiserver.key'],
        ca: pki['client-ca.crt'],
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => {
        seen.push(String(socket.getPeerCertificate().subject.CN));
        socket.end('ok');
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function connect(cert: string, key: string): Promise<{ authorized: boolean; error?: Error; data: string }> {
    return new Promise((resolve) => {
      let data = '';
      const socket = tls.connect({ host: '127.0.0.1', port, ca: pki['ca.crt'], cert, key });
      socket.on('data', (d) => (data += d));
      socket.on('end', () => resolve({ authorized: socket.authorized, data }));
      socket.on('error', (error) => resolve({ authorized: false, error, data }));
    });
  }

  it('serves 127.0.0.1 with a certificate the pool CA verifies, and accepts the agent', async () => {
    const r = await connect(pki['agent.crt'], pki['agent.key']);
    expect(r.error).toBeUndefined();
    expect(r.authorized).toBe(true);
    expect(r.data).toBe('ok');
    expect(seen).toContain('poolspirit:agent');
  });

  it('refuses a client certificate from the etcd CA', async () => {
    const r = await connect(pki['apiserver-etcd-client.crt'], pki['apiserver-etcd-client.key']);
    // With TLS 1.3 the client learns of the rejection as an alert or a closed connection: either way no data.
    expect(r.data).toBe('');
    expect(seen).not.toContain('poolspirit-apiserver-etcd-client');
  });
});
