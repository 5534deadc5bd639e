/**
 * The transport against kube-apiserver (the built control plane, dev/local/real-cluster): a client
 * certificate from a kubeconfig authenticates, and the server's 401 and 403 become KubeApiErrors.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeTransport, KubeApiError, type KubeTransport } from '../../../../adapters/kubernetes/http/index.ts';
import { connectionFromKubeconfig } from '../../../../adapters/kubernetes/http/kubeconfig.ts';
import { createCertificateAuthority } from '../../../../dev/local/pki.ts';
import {
  type ClientIdentity,
  type RealHostCluster,
  startRealHostCluster,
} from '../../../../dev/local/real-cluster/control-plane.ts';

describe('transport against kube-apiserver with x509 auth', () => {
  let real: RealHostCluster;
  let dir: string;
  const transports: KubeTransport[] = [];
  const track = (t: KubeTransport) => {
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kube-http-x509-'));
    real = await startRealHostCluster({
      name: 'kube-http-x509',
      ca: await createCertificateAuthority('kube-http-x509'),
      controllers: false,
    });
  }, 120_000);
  afterAll(async () => {
    for (const t of transports) t.close();
    await real?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function transportFor(identity: ClientIdentity): Promise<KubeTransport> {
    const path = join(dir, `kc-${transports.length}`);
    await real.writeKubeconfig(path, identity);
    return track(createKubeTransport(connectionFromKubeconfig(await readFile(path, 'utf8'))));
  }

  it('authenticates by client certificate from a kubeconfig', async () => {
    const t = await transportFor({ user: 'alice', groups: ['system:masters'] });
    const list = await t.request<{ items: Array<{ metadata: { name: string } }> }>({
      method: 'GET',
      path: '/api/v1/namespaces',
    });
    expect(list.items.map((n) => n.metadata.name)).toContain('kube-system');
  });

  it('maps 401 and 403 to KubeApiError with code, reason and Status body', async () => {
    // A credential no authenticator accepts is a 401 (with no credential at all kube would authorize the
    // request as system:anonymous instead).
    const unknown = track(createKubeTransport({ server: real.url, caPem: real.caPem, token: 'not-a-known-token' }));
    const unauthorized = await unknown.request({ method: 'GET', path: '/api/v1/namespaces' }).catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(KubeApiError);
    expect(unauthorized).toMatchObject({
      code: 401,
      reason: 'Unauthorized',
      method: 'GET',
      path: '/api/v1/namespaces',
      body: { kind: 'Status' },
    });

    const nobody = await transportFor({ user: 'nobody' });
    const forbidden = (await nobody
      .request({
        method: 'GET',
        path: '/api/v1/namespaces/default/configmaps',
        query: { labelSelector: 'secret=value' },
      })
      .catch((e: unknown) => e)) as KubeApiError;
    expect(forbidden).toMatchObject({ code: 403, reason: 'Forbidden', path: '/api/v1/namespaces/default/configmaps' });
    expect(forbidden.message).toBe(
      'GET /api/v1/namespaces/default/configmaps: 403 Forbidden: configmaps is forbidden: User "nobody" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
    expect(forbidden.message).not.toContain('secret=value');
  });
});
