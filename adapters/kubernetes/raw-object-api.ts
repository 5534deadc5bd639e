/**
 * KubernetesObjectApi without the typed model layer. client-node (de)serialises known kinds through its
 * generated models, which renames or drops keys the models do not spell the same way (a CRD's
 * `x-kubernetes-int-or-string` is silently lost) and turns timestamps into Date objects. The reconciler
 * compares and applies plain JSON exactly as the apiserver speaks it, so bodies go out and come back raw.
 * Discovery (kind → resource path) and authentication are still the library's.
 */

import type { KubeConfig, KubernetesObject, ResponseContext } from '@kubernetes/client-node';
import { ApiException, HttpMethod, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { makeKeepAliveApiClient } from './keep-alive-authentication.ts';

export class RawObjectApi extends KubernetesObjectApi {
  /**
   * As `kc.makeApiClient(RawObjectApi)`, but the client keeps its connections open between requests (see
   * keep-alive-authentication.ts): client-node 1.x opens a new one, and a TLS handshake, for every request.
   */
  static fromKubeConfig(kc: KubeConfig): RawObjectApi {
    const client = makeKeepAliveApiClient(kc, RawObjectApi);
    client.setDefaultNamespace(kc);
    return client;
  }

  protected override async processResponse<T extends KubernetesObject>(response: ResponseContext): Promise<T> {
    const text = await response.body.text();
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) {
      return (text ? JSON.parse(text) : {}) as T;
    }
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    throw new ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', body, response.headers);
  }

  /** Server-side apply of a plain JSON object. */
  async applyJson<T extends KubernetesObject>(obj: T, fieldManager: string, force: boolean): Promise<T> {
    const path = await this.specUriPath(obj, 'patch');
    const ctx = this.configuration.baseServer.makeRequestContext(path, HttpMethod.PATCH);
    ctx.setHeaderParam('Accept', 'application/json');
    ctx.setHeaderParam('Content-Type', PatchStrategy.ServerSideApply);
    ctx.setQueryParam('fieldManager', fieldManager);
    ctx.setQueryParam('force', String(force));
    ctx.setBody(JSON.stringify(obj));
    return this.requestPromise<T>(ctx);
  }

  /** Create of a plain JSON object. */
  async createJson<T extends KubernetesObject>(obj: T, fieldManager?: string): Promise<T> {
    const path = await this.specUriPath(obj, 'create');
    const ctx = this.configuration.baseServer.makeRequestContext(path, HttpMethod.POST);
    ctx.setHeaderParam('Accept', 'application/json');
    ctx.setHeaderParam('Content-Type', 'application/json');
    if (fieldManager) ctx.setQueryParam('fieldManager', fieldManager);
    ctx.setBody(JSON.stringify(obj));
    return this.requestPromise<T>(ctx);
  }

  /** A read answered as plain JSON of the caller's shape (unchecked, as requestJson), not client-node's models. */
  async readJson<T>(header: KubernetesObject): Promise<T> {
    return this.requestJson<T>(HttpMethod.GET, await this.specUriPath(header, 'read'));
  }

  /** Any request with a plain JSON body and answer, e.g. to a subresource the typed methods do not cover. */
  async requestJson<T>(
    method: HttpMethod,
    path: string,
    opts: { body?: unknown; contentType?: string; accept?: string; query?: Record<string, string> } = {},
  ): Promise<T> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, method);
    ctx.setHeaderParam('Accept', opts.accept ?? 'application/json');
    for (const [k, v] of Object.entries(opts.query ?? {})) ctx.setQueryParam(k, v);
    if (opts.body !== undefined) {
      ctx.setHeaderParam('Content-Type', opts.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(opts.body));
    }
    // The answer is the apiserver's JSON, of the shape the caller asked for: unchecked, as JSON.parse is.
    const body: unknown = await this.requestPromise<KubernetesObject>(ctx);
    return body as T;
  }
}
