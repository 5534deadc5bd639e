/**
 * The HTTP client of the local stack's stand-ins for kubelet, controller-manager and the pool-spirit agent:
 * the functions' own small client (adapters/kubernetes/http) built from the same kubeconfig, instead of
 * client-node's request stack (its middleware and node-fetch on every request; the agent's part also built a
 * new client, and a new connection, per pod). These parts make some ten requests a pool, which held back how
 * fast a local fleet converges (dev/bench/HISTORY.md, "After the stand-ins' own client and pods/binding"). A
 * kubeconfig the small client cannot serve (a credential plugin, which it deliberately never runs; basic auth;
 * impersonation; a proxy) keeps client-node.
 */
import { readFileSync } from 'node:fs';
import { HttpMethod as ClientNodeMethod, type KubeConfig } from '@kubernetes/client-node';
import {
  type ClusterConnection,
  createKubeTransport,
  type HttpMethod,
} from '../../../adapters/kubernetes/http/index.ts';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';

export interface LocalKubeClient {
  /**
   * A request with a JSON body and answer (RawObjectApi.requestJson's contract). Non-2xx rejects with an
   * error whose `code` is the HTTP status and `body` the parsed Status.
   */
  requestJson<T>(method: HttpMethod, path: string, opts?: RequestOptions): Promise<T>;
  /**
   * A write whose successful answer the caller does not read: not decoded (a status write's answer is the
   * whole object again, ~15 KB for a pool-spirit Pod or Deployment). Errors reject as requestJson's do.
   */
  write(method: HttpMethod, path: string, opts?: RequestOptions): Promise<void>;
}

interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string>;
}

const USER_AGENT = 'pool-spirit-local-sim';
const clients = new WeakMap<KubeConfig, LocalKubeClient>();

/** One client per kubeconfig, its connections kept open between requests. */
export function localKubeClient(kc: KubeConfig): LocalKubeClient {
  let client = clients.get(kc);
  if (!client) {
    const connection = connectionOf(kc);
    if (connection) {
      const transport = createKubeTransport(connection, { userAgent: USER_AGENT });
      const send = <T>(method: HttpMethod, path: string, opts: RequestOptions, answer: 'json' | 'ignored') =>
        transport.request<T>({
          method,
          path,
          body: opts.body,
          contentType: opts.contentType,
          query: opts.query,
          answer,
        });
      client = {
        requestJson: (method, path, opts = {}) => send(method, path, opts, 'json'),
        write: (method, path, opts = {}) => send<void>(method, path, opts, 'ignored'),
      };
    } else {
      const api = RawObjectApi.fromKubeConfig(kc);
      client = {
        requestJson: (method, path, opts) => api.requestJson(ClientNodeMethod[method], path, opts),
        // client-node decodes every answer; this client only spares its callers the result.
        write: async (method, path, opts) => void (await api.requestJson(ClientNodeMethod[method], path, opts)),
      };
    }
    clients.set(kc, client);
  }
  return client;
}

/**
 * The kubeconfig's current cluster and user as a ClusterConnection; undefined for what the small client does
 * not do (a credential plugin, basic auth, impersonation, a proxy).
 */
function connectionOf(kc: KubeConfig): ClusterConnection | undefined {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster || cluster.proxyUrl) return undefined;
  if (user?.exec || user?.authProvider || user?.username || user?.password || user?.impersonateUser) return undefined;
  const pem = (data: string | undefined, file: string | undefined) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : file ? readFileSync(file, 'utf8') : undefined;
  return {
    server: cluster.server,
    caPem: pem(cluster.caData, cluster.caFile),
    insecureSkipTlsVerify: cluster.skipTLSVerify,
    tlsServerName: cluster.tlsServerName,
    token: user?.token,
    clientCertPem: pem(user?.certData, user?.certFile),
    clientKeyPem: pem(user?.keyData, user?.keyFile),
  };
}
