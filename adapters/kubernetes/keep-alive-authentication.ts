/**
 * client-node 1.x builds a new http(s).Agent for every request (KubeConfig.applySecurityAuthentication), so
 * every request opens a TCP connection, and against a real apiserver a TLS handshake, and closes it. This
 * authentication does what the kubeconfig does (headers, client certificate, CA) and then swaps that
 * one-request agent for a keep-alive agent built once from the same options, rebuilt only when they change
 * (a credential plugin that rotates the client certificate; the old agent's idle connections then close on
 * the server's idle timeout, while requests still on them finish). Proxy agents are left as the kubeconfig
 * made them.
 */
import http from 'node:http';
import https from 'node:https';
import type { Configuration, KubeConfig, RequestContext, SecurityAuthentication } from '@kubernetes/client-node';
import { createConfiguration, ServerConfiguration } from '@kubernetes/client-node';

/** The options Node keeps on an agent (`agent.options`, set by its constructor). */
type WithOptions = { options?: https.AgentOptions };

/** The TLS material and checks that make two agents interchangeable. */
function fingerprint(secure: boolean, o: https.AgentOptions): string {
  const text = (v: unknown) => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : String(v));
  return JSON.stringify([
    secure,
    text(o.ca),
    text(o.cert),
    text(o.key),
    text(o.pfx),
    text(o.passphrase),
    text(o.servername),
    text(o.rejectUnauthorized),
  ]);
}

export function keepAliveAuthentication(kc: KubeConfig): SecurityAuthentication {
  let kept: { agent: http.Agent; fingerprint: string } | undefined;
  return {
    getName: () => 'kubeconfig (keep-alive)',
    async applySecurityAuthentication(context: RequestContext) {
      await kc.applySecurityAuthentication(context);
      const made = context.getAgent();
      // Exactly http.Agent or https.Agent: a proxy agent (a subclass) keeps its own connection handling.
      const secure = made?.constructor === https.Agent;
      if (!made || (!secure && made.constructor !== http.Agent)) return;
      const options = (made as WithOptions).options ?? {};
      const print = fingerprint(secure, options);
      if (kept?.fingerprint !== print) {
        const agent = secure
          ? new https.Agent({ ...options, keepAlive: true })
          : new http.Agent({ ...options, keepAlive: true });
        kept = { agent, fingerprint: print };
      }
      made.destroy();
      context.setAgent(kept.agent);
    },
  };
}

/** `kc.makeApiClient(apiClientType)` with keep-alive connections (keepAliveAuthentication). */
export function makeKeepAliveApiClient<T>(kc: KubeConfig, apiClientType: new (config: Configuration) => T): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return new apiClientType(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: keepAliveAuthentication(kc) },
    }),
  );
}
