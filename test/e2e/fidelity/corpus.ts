/**
 * The differential corpus: HTTP requests, grouped in cases, captured once through the kube-proxy from real
 * clients (kubectl's acceptance cases, the reconcile handler) against the local API, and replayed on both
 * backends. Only requests are kept, plus the identities the captured answers handed out (uids,
 * resourceVersions, continue tokens) so a replay can put its own backend's values in their place.
 */
import { readFileSync } from 'node:fs';

export interface CorpusRequest {
  /** `<case>#<n>`, stable across captures of the same cases. */
  id: string;
  method: string;
  path: string;
  query: string;
  contentType?: string;
  accept?: string;
  /** A UTF-8 body (JSON or YAML); Secret values redacted by the proxy. */
  body?: string;
  /** A binary body (protobuf), base64. */
  bodyBase64?: string;
  /** For a watch: how many events (bookmarks left out) the captured client received before it stopped. */
  watchEvents?: number;
  /** JSON paths in the captured answer → the uid, resourceVersion or continue token found there. */
  binds?: Record<string, string>;
  /** Captured status, for reading the fixture. */
  capturedStatus: number;
}

export interface CorpusCase {
  name: string;
  /** Who made the requests: `kubectl ...` commands, or the product's handler. */
  source: string;
  requests: CorpusRequest[];
}

export interface Corpus {
  capturedWith: string;
  cases: CorpusCase[];
}

export const CORPUS_PATH = new URL('./fixtures/corpus.json', import.meta.url);

export function loadCorpus(): Corpus {
  return JSON.parse(readFileSync(CORPUS_PATH, 'utf8')) as Corpus;
}

const IDENTITY_KEYS = new Set(['uid', 'resourceVersion', 'continue']);

/** Every uid/resourceVersion/continue string in a JSON value, by path. */
export function identities(value: unknown, path = '$', out: Record<string, string> = {}): Record<string, string> {
  if (Array.isArray(value))
    value.forEach((v, i) => {
      identities(v, `${path}[${i}]`, out);
    });
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (IDENTITY_KEYS.has(k) && typeof v === 'string' && v !== '' && v !== '0') out[`${path}.${k}`] = v;
      else identities(v, `${path}.${k}`, out);
    }
  }
  return out;
}

/** The JSON documents of an answer: one, or one per line for a watch stream; none when it is not JSON. */
export function jsonDocuments(body: string): unknown[] {
  try {
    return [JSON.parse(body)];
  } catch {
    try {
      return body
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as unknown);
    } catch {
      return [];
    }
  }
}
