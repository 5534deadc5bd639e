/**
 * Library entry of the local Kubernetes API: start one cluster (HTTP on loopback, memory or given
 * storage), many per process if wanted, each with its own registry, request log and kubeconfig.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { ResourceRegistry } from './registry.ts';
import { builtinResources } from './builtin-resources.ts';
import { createMemoryStorage } from './storage/memory.ts';
import type { Storage } from './storage/types.ts';
import { RequestLog } from './server/request-log.ts';
import { createApiServer } from './server/http.ts';
import { ObjectStore } from './server/store.ts';
import { Controllers } from './server/controllers.ts';
import { createGcApi } from './server/gc-api.ts';
import { faultsModule, gcModule, schemaModule } from './server/peers.ts';
import type { ApiContext } from './server/context.ts';

export { RequestLog, type RequestRecord, type WriteFilter, WRITE_VERBS } from './server/request-log.ts';
export type { Storage } from './storage/types.ts';
export { createMemoryStorage } from './storage/memory.ts';
export type { ResourceInfo } from './registry.ts';

export type { FaultConfig } from './faults.ts';
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

export interface LocalCluster {
  url: string;
  name: string;
  storage: Storage;
  requestLog: RequestLog;
  /** Writes a kubeconfig (one cluster, context and user, no credentials) pointing at this cluster. */
  writeKubeconfig(path: string): Promise<void>;
  /** Replaces the fault injection rules (an empty rule list turns faults off). */
  setFaults(cfg: FaultConfig): void;
  /** Stops serving, ends open watches, stops controllers; closes the storage if it was created here. */
  stop(): Promise<void>;
}

export function kubeconfigYaml(name: string, url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless this is set (kubectl does not care); there is no TLS to verify.
    ...(url.startsWith('http:') ? ['    insecure-skip-tls-verify: true'] : []),
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
    '  user: {}',
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
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const writeKubeconfig = async (path: string) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, kubeconfigYaml(name, url), { mode: 0o600 });
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
  return { url, name, storage, requestLog, writeKubeconfig, setFaults, stop };
}

/** kube-apiserver creates these on start; clients assume `default` exists. */
async function ensureDefaultNamespaces(store: ObjectStore, ctx: ApiContext): Promise<void> {
  const nsInfo = ctx.registry.get('', 'v1', 'namespaces')!;
  for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    if (await store.get(nsInfo, undefined, ns)) continue;
    await store
      .create(nsInfo, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { fieldManager: 'kube-apiserver' })
      .catch((err) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
  }
}
