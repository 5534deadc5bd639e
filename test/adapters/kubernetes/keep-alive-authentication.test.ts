import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveAuthentication } from '../../../adapters/kubernetes/keep-alive-authentication.ts';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';

/** A kubeconfig-like source whose agents carry the given client certificate (what a credential plugin rotates). */
function fakeKubeConfig(cert: () => string, agent: (options: https.AgentOptions) => http.Agent) {
  return {
    async applySecurityAuthentication(ctx: RequestContext) {
      ctx.setHeaderParam('Authorization', 'Bearer t');
      ctx.setAgent(agent({ cert: cert(), keepAlive: false }));
    },
  } as unknown as KubeConfig;
}

const context = () => new RequestContext('https://example.invalid/api', HttpMethod.GET);

describe('keep-alive authentication for client-node', () => {
  let server: http.Server;
  let connections = 0;
  let kc: KubeConfig;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"NamespaceList","items":[]}');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc = new KubeConfig();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    kc.loadFromClusterAndUser({ name: 'c', server: url, skipTLSVerify: true }, { name: 'u' });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends every request of a client over one connection, where client-node alone opens one each', async () => {
    const before = connections;
    const api = RawObjectApi.fromKubeConfig(kc);
    for (let i = 0; i < 5; i++) await api.requestJson(HttpMethod.GET, '/api/v1/namespaces');
    expect(connections - before).toBe(1);

    const plain = kc.makeApiClient(CoreV1Api);
    const beforePlain = connections;
    for (let i = 0; i < 5; i++) await plain.listNamespace();
    expect(connections - beforePlain).toBe(5);
  });

  it('keeps the kubeconfig headers and builds a new agent only when its TLS material changes', async () => {
    let cert = 'cert-1';
    const auth = keepAliveAuthentication(
      fakeKubeConfig(
        () => cert,
        (o) => new https.Agent(o),
      ),
    );
    const agentOf = async () => {
      const ctx = context();
      await auth.applySecurityAuthentication(ctx);
      expect(ctx.getHeaders().Authorization).toBe('Bearer t');
      return ctx.getAgent() as https.Agent & { keepAlive?: boolean };
    };
    const first = await agentOf();
    expect(first.keepAlive).toBe(true);
    expect(await agentOf()).toBe(first);
    cert = 'cert-2';
    const rotated = await agentOf();
    expect(rotated).not.toBe(first);
    expect((rotated as https.Agent & { options: https.AgentOptions }).options.cert).toBe('cert-2');
    expect(await agentOf()).toBe(rotated);
  });

  it('leaves a proxy agent as the kubeconfig made it', async () => {
    class ProxyAgent extends https.Agent {}
    const made: http.Agent[] = [];
    const auth = keepAliveAuthentication(
      fakeKubeConfig(
        () => 'c',
        (o) => {
          const a = new ProxyAgent(o);
          made.push(a);
          return a;
        },
      ),
    );
    const ctx = context();
    await auth.applySecurityAuthentication(ctx);
    expect(ctx.getAgent()).toBe(made[0]);
  });
});
