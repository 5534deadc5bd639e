/**
 * Test harness for the local API driven by @kubernetes/client-node: one cluster per backend, clients
 * for it, and a raw HTTP helper for asserting status codes and Status bodies exactly.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import {
  type LocalCluster,
  type LocalClusterOptions,
  type Storage,
  startLocalCluster,
} from '../../../../../dev/local/kube-api/index.ts';
import { createMemoryStorage } from '../../../../../dev/local/kube-api/storage/memory.ts';

export interface StorageBackend {
  name: 'memory' | 'etcd';
  /** A fresh, empty storage and how to dispose of it. */
  create(): Promise<{ storage: Storage; dispose(): Promise<void> }>;
}

export const memoryBackend: StorageBackend = {
  name: 'memory',
  async create() {
    const storage = createMemoryStorage();
    return { storage, dispose: () => storage.close() };
  },
};

const etcdModule = fileURLToPath(new URL('../../../../../dev/local/kube-api/storage/etcd.ts', import.meta.url));

/** Needs the etcd binary the project builds (scripts/ensure-env.sh); `backends` lists it only when built. */
export const etcdBackend: StorageBackend = {
  name: 'etcd',
  async create() {
    const { startEtcd } = await import('../../../../../dev/local/etcd/launch.ts');
    const { createEtcdStorage } = await import(etcdModule);
    const etcd = await startEtcd();
    try {
      const storage: Storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
      return {
        storage,
        async dispose() {
          await storage.close();
          await etcd.stop();
        },
      };
    } catch (err) {
      await etcd.stop();
      throw err;
    }
  },
};

/** Every backend the storage-dependent tests run on. */
export const backends: StorageBackend[] =
  existsSync(etcdModule) && process.env.KUBE_API_TEST_BACKENDS !== 'memory'
    ? [memoryBackend, etcdBackend]
    : [memoryBackend];

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface TestCluster {
  cluster: LocalCluster;
  kc: k8s.KubeConfig;
  objects: k8s.KubernetesObjectApi;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  watch: k8s.Watch;
  raw(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RawResponse>;
  /** Creates a namespace with a unique name and returns it. */
  namespace(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter++;
  return `${prefix}-${process.pid % 10000}-${counter}`;
}

export async function startTestCluster(
  backend: StorageBackend,
  opts: Omit<LocalClusterOptions, 'storage'> = {},
): Promise<TestCluster> {
  const { storage, dispose } = await backend.create();
  const cluster = await startLocalCluster({ ...opts, storage, name: `test-${backend.name}` });
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.url, skipTLSVerify: true }],
    users: [{ name: 'local' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'local', namespace: 'default' }],
    currentContext: 'local',
  });
  const raw: TestCluster['raw'] = async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
        (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
      }
    }
    const res = await fetch(cluster.url + path, init);
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return {
    cluster,
    kc,
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    core: kc.makeApiClient(k8s.CoreV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    watch: new k8s.Watch(kc),
    raw,
    async namespace(prefix = 'ns') {
      const name = uniqueName(prefix);
      const res = await raw('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      if (res.status !== 201) throw new Error(`creating namespace ${name}: ${res.status} ${res.text}`);
      return name;
    },
    async stop() {
      await cluster.stop();
      await dispose();
    },
  };
}

/** The parsed Status body of a client-node ApiException. */
export function statusOf(err: unknown): { code: number; reason?: string; message?: string; details?: any } {
  const e = err as { code?: number; body?: unknown };
  if (typeof e?.code !== 'number') throw err;
  const body = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
  return { code: e.code, ...(body as object) };
}

/** Awaits a promise expected to fail with an API error; returns that error's Status. */
export async function expectApiError(p: Promise<unknown>): Promise<ReturnType<typeof statusOf>> {
  try {
    await p;
  } catch (err) {
    return statusOf(err);
  }
  throw new Error('expected the API call to fail');
}

export const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string' },
                  size: { type: 'integer', minimum: 1 },
                  tags: { type: 'array', items: { type: 'string' } },
                },
              },
              status: {
                type: 'object',
                properties: {
                  ready: { type: 'boolean' },
                  observedGeneration: { type: 'integer' },
                },
              },
            },
          },
        },
      },
    ],
  },
};

/**
 * Reads a raw watch stream, handing `onLine` each line exactly as received (newline included), until the
 * stream ends or `abort()` is called; `done` then resolves.
 */
export function readWatchLines(
  url: string,
  onLine: (line: string) => void,
  headers: Record<string, string> = {},
): { done: Promise<void>; abort(): void } {
  const ctrl = new AbortController();
  const done = (async () => {
    try {
      const res = await fetch(url, { signal: ctrl.signal, headers });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buf += decoder.decode(value, { stream: true });
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          onLine(buf.slice(0, nl + 1));
          buf = buf.slice(nl + 1);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { done, abort: () => ctrl.abort() };
}
