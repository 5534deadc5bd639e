/**
 * The load phases: write N Nodes and M Pods of a target size through the API with bounded concurrency,
 * and delete them all again, timing every request.
 */
import { performance } from 'node:perf_hooks';
import { max, median, percentile } from '../../shared/stats.ts';
import type { KubeHttp } from './kube-http.ts';
import { unexpected } from './kube-http.ts';
import { nodeName, nodeObject, PROBE_LABEL, PROBE_NAMESPACE, podName, podObject, size } from './objects.ts';

export interface LoadShape {
  nodes: number;
  pods: number;
  objectBytes: number;
  concurrency: number;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  max: number;
}

export interface PhaseFigures {
  requests: number;
  seconds: number;
  perSecond: number;
  latencyMs: LatencySummary;
  errors: number;
  /** First few distinct error messages. */
  errorSamples: string[];
}

export interface WriteFigures extends PhaseFigures {
  /** Mean JSON size of the objects sent and of what the API stored (with managedFields etc.). */
  meanSentBytes: number;
  meanStoredBytes: number;
}

export function summarize(latencies: number[]): LatencySummary {
  const r = (n: number) => Math.round(n * 10) / 10;
  return { p50: r(median(latencies)), p99: r(percentile(latencies, 99)), max: r(max(latencies, 0)) };
}

/** Runs `task(i)` for i in [0, total) on `concurrency` workers; returns each task's latency in ms. */
export async function runBounded(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number; errors: string[] }> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const t0 = performance.now();
      try {
        await task(i);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, total)) }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000, errors };
}

function figures(run: { latencies: number[]; seconds: number; errors: string[] }): PhaseFigures {
  const requests = run.latencies.length + run.errors.length;
  return {
    requests,
    seconds: Math.round(run.seconds * 100) / 100,
    perSecond: run.seconds > 0 ? Math.round((run.latencies.length / run.seconds) * 10) / 10 : 0,
    latencyMs: summarize(run.latencies),
    errors: run.errors.length,
    errorSamples: [...new Set(run.errors)].slice(0, 3),
  };
}

export async function ensureNamespace(api: KubeHttp): Promise<void> {
  const res = await api.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: PROBE_NAMESPACE },
  });
  if (res.status !== 201 && res.status !== 409) throw unexpected(`create namespace ${PROBE_NAMESPACE}`, res);
  // A real apiserver's ServiceAccount admission refuses Pods whose service account does not exist, and a
  // pool-spirit runs no controller-manager to create `default`. (An API that serves no ServiceAccounts, 404,
  // admits Pods without one.)
  const sa = await api.request('POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'default' },
  });
  if (sa.status !== 201 && sa.status !== 409 && sa.status !== 404)
    throw unexpected(`create service account ${PROBE_NAMESPACE}/default`, sa);
}

export const nodePath = (name: string) => `/api/v1/nodes/${name}`;
export const podPath = (name: string) => `/api/v1/namespaces/${PROBE_NAMESPACE}/pods/${name}`;

/** Every object the probe writes, by API path: nodes first, then pods. */
export function probePaths(shape: Pick<LoadShape, 'nodes' | 'pods'>): string[] {
  return [
    ...Array.from({ length: shape.nodes }, (_, i) => nodePath(nodeName(i))),
    ...Array.from({ length: shape.pods }, (_, i) => podPath(podName(i))),
  ];
}

export async function writeObjects(api: KubeHttp, shape: LoadShape): Promise<WriteFigures> {
  await ensureNamespace(api);
  let sent = 0;
  let stored = 0;
  const run = await runBounded(shape.nodes + shape.pods, shape.concurrency, async (i) => {
    const isNode = i < shape.nodes;
    const obj = isNode ? nodeObject(i, shape.objectBytes) : podObject(i - shape.nodes, shape.objectBytes, shape.nodes);
    const path = isNode ? '/api/v1/nodes' : `/api/v1/namespaces/${PROBE_NAMESPACE}/pods`;
    const res = await api.request('POST', path, obj);
    if (res.status !== 201) throw unexpected(`create ${isNode ? 'Node' : 'Pod'}`, res);
    sent += size(obj);
    stored += size(res.body);
  });
  const ok = Math.max(1, run.latencies.length);
  return { ...figures(run), meanSentBytes: Math.round(sent / ok), meanStoredBytes: Math.round(stored / ok) };
}

export async function deleteObjects(api: KubeHttp, shape: LoadShape): Promise<PhaseFigures> {
  const paths = probePaths(shape);
  // Pods first (as a drain would), immediately: no kubelet confirms a graceful deletion here.
  paths.reverse();
  const run = await runBounded(paths.length, shape.concurrency, async (i) => {
    const res = await api.request('DELETE', `${paths[i]}?gracePeriodSeconds=0`);
    if (res.status !== 200 && res.status !== 202 && res.status !== 404) throw unexpected(`delete ${paths[i]}`, res);
  });
  return figures(run);
}

/** Removes what an earlier, interrupted run left behind (by the probe's label), so creates do not 409. */
export async function removeLeftovers(api: KubeHttp, concurrency: number): Promise<number> {
  const selector = encodeURIComponent(`${PROBE_LABEL}=true`);
  const paths: string[] = [];
  for (const [list, item] of [
    [`/api/v1/namespaces/${PROBE_NAMESPACE}/pods?labelSelector=${selector}`, podPath],
    [`/api/v1/nodes?labelSelector=${selector}`, nodePath],
  ] as const) {
    const res = await api.request<{ items?: Array<{ metadata: { name: string } }> }>('GET', list);
    if (res.status === 404) continue;
    if (res.status !== 200) throw unexpected(`list leftovers`, res);
    for (const o of res.body.items ?? []) paths.push(item(o.metadata.name));
  }
  await runBounded(paths.length, concurrency, async (i) => {
    await api.request('DELETE', `${paths[i]}?gracePeriodSeconds=0`);
  });
  return paths.length;
}
