/**
 * One measurement: the corpus replayed on a fresh local API and on a fresh real kube-apiserver v1.36.3
 * (etcd 3.6.16), each behind a kube-proxy; answers normalized and compared; every difference matched
 * against the documented list (differences.json). Used by differential.e2e.test.ts and report.ts.
 */
import { readFileSync } from 'node:fs';
import { startLocalCluster } from '../../../dev/local/kube-api/index.ts';
import { type KubeProxy, startKubeProxy } from '../../../dev/local/kube-proxy/index.ts';
import { agentTls, startRealApiserver } from '../../support/real-apiserver.ts';
import { type Corpus, loadCorpus } from './corpus.ts';
import { type Difference, diffAnswers } from './diff.ts';
import { Normalizer } from './normalize.ts';
import { replayCorpus } from './replay.ts';

export interface DifferenceMatch {
  /** RegExp on `METHOD /path?query` of the replayed call. */
  call?: string;
  /** RegExp on the difference's path. */
  path: string;
  side?: Difference['side'];
}

export interface ListedDifference {
  id: string;
  what: string;
  why: string;
  affects: string;
  match: DifferenceMatch[];
}

export interface FixedDifference {
  id: string;
  what: string;
  /** Where it was fixed and the test that keeps it fixed. */
  fix: string;
}

export interface DifferenceBook {
  fixed: FixedDifference[];
  listed: ListedDifference[];
}

export const BOOK_PATH = new URL('./differences.json', import.meta.url);

export function loadBook(): DifferenceBook {
  return JSON.parse(readFileSync(BOOK_PATH, 'utf8')) as DifferenceBook;
}

export interface Measurement {
  requests: number;
  /** Every difference seen, with the listed entry that explains it, if any. */
  differences: Array<Difference & { listed?: string }>;
  unexplained: Difference[];
  /** Listed entries that explained nothing in this run (fixed since, or their match is wrong). */
  stale: string[];
  /** Per listed entry, how many differences it explained. */
  hits: Record<string, number>;
  seconds: { local: number; real: number; startReal: number };
}

export function explains(entry: ListedDifference, d: Difference): boolean {
  return entry.match.some(
    (m) =>
      (!m.call || new RegExp(m.call).test(d.call)) && new RegExp(m.path).test(d.path) && (!m.side || m.side === d.side),
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = Date.now();
  const v = await fn();
  return [v, (Date.now() - t) / 1000];
}

export async function measure(corpus: Corpus = loadCorpus(), book: DifferenceBook = loadBook()): Promise<Measurement> {
  const proxies: KubeProxy[] = [];
  const local = await startLocalCluster({ bookmarkIntervalMs: 60_000 });
  // Every API group on: the corpus is general kube (kubectl's cases, the host cluster's Deployments), while a
  // pool-spirit serves only what a pool needs (its rendered --runtime-config).
  const [real, startReal] = await timed(() =>
    startRealApiserver({ spec: { apiServer: { extraArgs: { 'runtime-config': 'api/all=true' } } } }),
  );
  try {
    const localProxy = await startKubeProxy({ target: local.url });
    proxies.push(localProxy);
    const realProxy = await startKubeProxy({ target: real.plane.apiServerUrl, upstream: await agentTls(real) });
    proxies.push(realProxy);
    const [localAnswers, tLocal] = await timed(() => replayCorpus(corpus, localProxy.url));
    const [realAnswers, tReal] = await timed(() => replayCorpus(corpus, realProxy.url));
    const nLocal = new Normalizer();
    const nReal = new Normalizer();
    const differences: Measurement['differences'] = [];
    let requests = 0;
    for (const c of corpus.cases) {
      for (const req of c.requests) {
        const l = localAnswers.get(req.id);
        const r = realAnswers.get(req.id);
        if (!l || !r) throw new Error(`request ${req.id} was not answered on ${l ? 'the real' : 'the local'} backend`);
        requests++;
        const norm = (n: Normalizer, a: typeof l) => ({
          ...a,
          body: n.normalize(a.body),
          ...(a.events ? { events: a.events.map((e) => n.normalize(e)) } : {}),
        });
        const call = `${req.method} ${req.path}${req.query ? `?${req.query}` : ''}`;
        for (const d of diffAnswers(req.id, call, norm(nLocal, l), norm(nReal, r))) {
          const entry = book.listed.find((e) => explains(e, d));
          differences.push(entry ? { ...d, listed: entry.id } : d);
        }
      }
    }
    const hits = Object.fromEntries(
      book.listed.map((e) => [e.id, differences.filter((d) => d.listed === e.id).length]),
    );
    return {
      requests,
      differences,
      unexplained: differences.filter((d) => !d.listed),
      stale: Object.entries(hits)
        .filter(([, n]) => n === 0)
        .map(([id]) => id),
      hits,
      seconds: { local: tLocal, real: tReal, startReal },
    };
  } finally {
    for (const p of proxies) await p.stop();
    await real.stop();
    await local.stop();
  }
}
