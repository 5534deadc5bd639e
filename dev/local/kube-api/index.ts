/**
 * Library entry of the local Kubernetes API: start one cluster (plain HTTP on loopback, no authentication
 * or authorization: the real kube-apiserver, dev/local/real-cluster, is where RBAC is tested; memory or given
 * storage), many per process if wanted, each with its own registry, request log and kubeconfig.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { builtinResources } from './builtin-resources.ts';
import { ResourceRegistry } from './registry.ts';
import type { ApiContext } from './server/context.ts';
import { Controllers } from './server/controllers.ts';
import { createGcApi } from './server/gc-api.ts';
import { createApiServer } from './server/http.ts';
import { listen } from './server/listen.ts';
import { createObjectCacheFactory, type ObjectCacheFactory } from './server/object-cache.ts';
import { faultsModule, gcModule, schemaModule } from './server/peers.ts';
import { RequestLog } from './server/request-log.ts';
import { ObjectStore } from './server/store.ts';
import { createMemoryStorage } from './storage/memory.ts';
import type { Storage } from './storage/types.ts';

export type { FaultConfig } from './faults.ts';
export type { ResourceInfo } from './registry.ts';
export type { CacheChange, ObjectCache, ObjectCacheFactory } from './server/object-cache.ts';
export { RequestLog, type RequestRecord, WRITE_VERBS, type WriteFilter } from './server/request-log.ts';
export { createMemoryStorage } from './storage/memory.ts';
export type { Storage } from './storage/types.ts';

import type { FaultConfig } from './faults.ts';

export interface LocalClusterOptions {
  /** TCP port; 0 (default) lets the OS pick. */
  port?: number;
  /** Listen address; loopback by default. */
  host?: string;
  /** Storage backend; a fresh in-memory store by default. It is closed on stop() only if created here. */
  storage?: Storage;
  /** Cluster name used in the kubeconfig (cluster, context and user names). Default `local`. */
  name?: string;
  faults?: FaultConfig;
  /** Write a kubeconfig here once serving. */
  kubeconfigPath?: string;
  /** How often watches with allowWatchBookmarks get a BOOKMARK. Default 10 s. */
  bookmarkIntervalMs?: number;
  /** Run the owner-reference garbage collector. Default true. */
  garbageCollector?: boolean;
}

/** A client identity for a kubeconfig: a client certificate and its key (PEM). */
export interface ClientIdentity {
  certPem: string;
  keyPem: string;
}

export interface LocalCluster {
  url: string;
  name: string;
  storage: Storage;
  requestLog: RequestLog;
  /** Writes a kubeconfig (one cluster, context and user; mode 0600) pointing at this cluster. */
  writeKubeconfig(path: string): Promise<void>;
  /** Replaces the fault injection rules (an empty rule list turns faults off). */
  setFaults(cfg: FaultConfig): void;
  /**
   * List+watch of a collection in this thread, without HTTP (server/object-cache.ts): for stand-ins running
   * beside the server. Its reads are not in the request log and no watch fault reaches them.
   */
  objectCaches: ObjectCacheFactory;
  /** Stops serving, ends open watches, stops controllers; closes the storage if it was created here. */
  stop(): Promise<void>;
}

const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

export function kubeconfigYaml(name: string, url: string, tls?: { caPem: string; identity?: ClientIdentity }): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless this is set (kubectl does not care); there is no TLS to verify.
    ...(url.startsWith('http:') ? ['    insecure-skip-tls-verify: true'] : []),
    ...(tls ? [`    certificate-authority-data: ${b64(tls.caPem)}`] : []),
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}`,
    '    namespace: default',
    `current-context: ${name}`,
    'preferences: {}',
    'users:',
    `- name: ${name}`,
    ...(tls?.identity
      ? [
          '  user:',
          `    client-certificate-data: ${b64(tls.identity.certPem)}`,
          `    client-key-data: ${b64(tls.identity.keyPem)}`,
        ]
      : ['  user: {}']),
    '',
  ].join('\n');
}

export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const name = opts.name ?? 'local';
  const ownsStorage = !opts.storage;
  const storage = opts.storage ?? createMemoryStorage();
  const registry = new ResourceRegistry();
  for (const info of builtinResources((g, v, k) => schemaModule.builtinSchema(g, v, k))) registry.add(info);
  const requestLog = new RequestLog();
  const ctx: ApiContext = {
    name,
    storage,
    registry,
    requestLog,
    faults: faultsModule.createFaultInjector(opts.faults),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 10_000,
    openWatches: new Set(),
    now: () => new Date(),
  };
  const store = new ObjectStore(ctx);
  const controllers = new Controllers(ctx, store);
  await controllers.start();
  await ensureDefaultNamespaces(store, ctx);
  const gc = opts.garbageCollector === false ? undefined : gcModule.startGarbageCollector(createGcApi(ctx, store));

  const server = createApiServer(ctx, store);
  const { url, sockets } = await listen(server, { host: opts.host, port: opts.port, https: false });

  const writeKubeconfig = async (path: string) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, kubeconfigYaml(name, url), { mode: 0o600 });
    await chmod(path, 0o600);
  };
  if (opts.kubeconfigPath) await writeKubeconfig(opts.kubeconfigPath);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      gc?.stop();
      for (const end of [...ctx.openWatches]) end();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      for (const s of sockets) s.destroy();
      await closed;
      await controllers.stop();
      if (ownsStorage) await storage.close();
    })());

  const setFaults = (cfg: FaultConfig) => ctx.faults.setConfig(cfg);
  const objectCaches = createObjectCacheFactory(ctx, store);
  return {
    url,
    name,
    storage,
    requestLog,
    writeKubeconfig,
    setFaults,
    objectCaches,
    stop,
  };
}

/** kube-apiserver creates these on start; clients assume `default` exists. */
async function ensureDefaultNamespaces(store: ObjectStore, ctx: ApiContext): Promise<void> {
  const nsInfo = ctx.registry.get('', 'v1', 'namespaces')!;
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    if (await store.get(nsInfo, undefined, ns)) continue;
    await store
      .create(
        nsInfo,
        undefined,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        { fieldManager: 'kube-apiserver' },
      )
      .catch((err) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
  }
}
