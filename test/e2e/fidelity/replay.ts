/**
 * Replays the corpus on one backend (through a kube-proxy, plain HTTP): requests in order, each case's
 * watches kept open while the case goes on and closed once they have seen as many events as the captured
 * client did. The captured uids, resourceVersions and continue tokens in a request are replaced by the ones
 * this backend handed out at the same place of the same earlier answer.
 *
 * Two stand-ins for kube-controller-manager, on both backends alike, so the comparison is of the APIs: a
 * new namespace gets its `default` ServiceAccount, and a new CRD is awaited until Established.
 */
import { request } from 'node:http';
import { type Corpus, type CorpusRequest, identities, jsonDocuments } from './corpus.ts';

export interface ReplayAnswer {
  id: string;
  status: number;
  contentType: string;
  /** Parsed JSON (one document), or the raw text when not JSON. */
  body: unknown;
  /** For a watch: its events, bookmarks left out. */
  events?: unknown[];
}

interface Sent {
  status: number;
  contentType: string;
  text: string;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function send(
  base: string,
  method: string,
  pathAndQuery: string,
  headers: Record<string, string>,
  body?: Buffer,
  signal?: AbortSignal,
  onData?: (text: string) => void,
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    let answer: Sent | undefined;
    const sized = body ? { ...headers, 'content-length': String(body.length) } : headers;
    const req = request(base + pathAndQuery, { method, headers: sized, signal }, (res) => {
      const got: Sent = {
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        text: '',
      };
      answer = got;
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        got.text += c;
        onData?.(got.text);
      });
      res.on('end', () => resolve(got));
      res.on('error', () => resolve(got));
    });
    // A watch is ended by aborting it: what it received so far is its answer.
    req.on('error', (err) =>
      signal?.aborted ? resolve(answer ?? { status: 0, contentType: '', text: '' }) : reject(err),
    );
    req.end(body);
  });
}

/** JSON answers only: protobuf is a wire format both backends speak, and answers are compared as JSON. */
function jsonAccept(accept: string | undefined): string {
  const kept = (accept ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s && !s.includes('protobuf'));
  return kept.length ? kept.join(',') : 'application/json';
}

class Identities {
  private readonly map = new Map<string, string>();

  learn(binds: Record<string, string> | undefined, answer: unknown): void {
    if (!binds) return;
    const actual = identities(answer);
    for (const [path, captured] of Object.entries(binds))
      if (actual[path] !== undefined) this.map.set(captured, actual[path]!);
  }

  private swap = (s: string) => this.map.get(s) ?? s;

  path(p: string): string {
    return p.replace(UUID, this.swap);
  }

  query(q: string): string {
    const params = new URLSearchParams(q);
    for (const key of ['resourceVersion', 'continue']) {
      const v = params.get(key);
      if (v !== null) params.set(key, this.swap(v));
    }
    return params.toString().replace(UUID, this.swap);
  }

  body(text: string): string {
    try {
      const walk = (v: unknown, key?: string): unknown => {
        if (Array.isArray(v)) return v.map((x) => walk(x));
        if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
        if (typeof v === 'string')
          return key === 'resourceVersion' || key === 'uid' ? this.swap(v) : v.replace(UUID, this.swap);
        return v;
      };
      return JSON.stringify(walk(JSON.parse(text)));
    } catch {
      return text.replace(UUID, this.swap);
    }
  }
}

const isUnserved = (s: Sent) => s.status === 404 && s.text.includes('the server could not find the requested resource');

async function settle(base: string, req: CorpusRequest, sent: Sent): Promise<void> {
  if (sent.status !== 201 && sent.status !== 200) return;
  const json = sent.contentType.includes('json')
    ? (jsonDocuments(sent.text)[0] as { kind?: string; metadata?: { name?: string } } | undefined)
    : undefined;
  const name = json?.metadata?.name;
  if (!name) return;
  if (json.kind === 'Namespace' && sent.status === 201) {
    const sa = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace: name },
    });
    await send(
      base,
      'POST',
      `/api/v1/namespaces/${name}/serviceaccounts`,
      { 'content-type': 'application/json' },
      Buffer.from(sa),
    );
  }
  if (json.kind === 'CustomResourceDefinition' && req.method !== 'GET') {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const got = await send(base, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, {
        accept: 'application/json',
      });
      const conditions =
        (JSON.parse(got.text) as { status?: { conditions?: Array<{ type: string; status: string }> } }).status
          ?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function answerOf(id: string, s: Sent, watch: boolean): ReplayAnswer {
  const docs = s.contentType.includes('json') ? jsonDocuments(s.text) : [];
  if (watch)
    return {
      id,
      status: s.status,
      contentType: s.contentType,
      body: undefined,
      events: docs.filter((d) => (d as { type?: string }).type !== 'BOOKMARK'),
    };
  return { id, status: s.status, contentType: s.contentType, body: docs.length === 1 ? docs[0] : s.text };
}

export async function replayCorpus(corpus: Corpus, base: string): Promise<Map<string, ReplayAnswer>> {
  const answers = new Map<string, ReplayAnswer>();
  const ids = new Identities();
  for (const c of corpus.cases) {
    const watches: Array<{ done: Promise<void>; stop(): void; enough(): boolean }> = [];
    for (const req of c.requests) {
      const query = ids.query(req.query);
      const target = ids.path(req.path) + (query ? `?${query}` : '');
      const headers: Record<string, string> = { accept: jsonAccept(req.accept), 'user-agent': 'fidelity-replay' };
      if (req.contentType) headers['content-type'] = req.contentType;
      const body =
        req.bodyBase64 !== undefined
          ? Buffer.from(req.bodyBase64, 'base64')
          : req.body !== undefined
            ? Buffer.from(ids.body(req.body))
            : undefined;
      if (req.watchEvents !== undefined) {
        const abort = new AbortController();
        let count = 0;
        const counted = (text: string) =>
          (count = jsonDocuments(text).filter((d) => (d as { type?: string }).type !== 'BOOKMARK').length);
        const done = send(base, req.method, target, headers, body, abort.signal, counted).then((s) => {
          const a = answerOf(req.id, s, true);
          answers.set(req.id, a);
          ids.learn(
            req.binds,
            a.events?.map((e) => (e as { object?: unknown }).object),
          );
        });
        watches.push({ done, stop: () => abort.abort(), enough: () => count >= req.watchEvents! });
        continue;
      }
      let sent = await send(base, req.method, target, headers, body);
      // A CRD's resources can take a moment to be served after it is Established.
      for (let deadline = Date.now() + 5_000; isUnserved(sent) && req.capturedStatus < 300 && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 100));
        sent = await send(base, req.method, target, headers, body);
      }
      const a = answerOf(req.id, sent, false);
      answers.set(req.id, a);
      ids.learn(req.binds, a.body);
      await settle(base, req, sent);
    }
    for (const w of watches) {
      const deadline = Date.now() + 3_000;
      while (!w.enough() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      w.stop();
      await w.done;
    }
  }
  return answers;
}
