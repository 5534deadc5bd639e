/**
 * The "simple JSONPath" subset that CRD additionalPrinterColumns may use (kube validates columns to it):
 * `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[*]`, and filters `[?(@.type=="Ready")]` with == / != against a
 * string, number or boolean. Evaluation returns every match in document order, like client-go's
 * FindResults with missing keys allowed.
 */

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' }
  | { kind: 'filter'; path: string[]; op: '==' | '!='; value: unknown }
  | { kind: 'exists'; path: string[] };

export class JsonPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonPathError';
  }
}

const cache = new Map<string, Step[]>();

export function parseJsonPath(expr: string): Step[] {
  const cached = cache.get(expr);
  if (cached) return cached;
  let text = expr.trim();
  // Accept the template form `{.a.b}` too.
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim();
  if (text.startsWith('$')) text = text.slice(1);
  const steps: Step[] = [];
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonPathError(`unrecognized JSONPath ${JSON.stringify(expr)}: ${what} at offset ${i}`);
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      i++;
      if (text[i] === '.') fail('recursive descent is not supported');
      const m = /^[A-Za-z0-9_\-$@*]+/.exec(text.slice(i));
      if (!m) {
        if (i >= text.length) break; // a bare "." selects the whole object
        fail('expected a field name');
      }
      i += m![0].length;
      steps.push(m![0] === '*' ? { kind: 'wildcard' } : { kind: 'field', name: m![0] });
    } else if (c === '[') {
      const close = findClose(text, i);
      if (close < 0) fail('unclosed [');
      const inner = text.slice(i + 1, close).trim();
      i = close + 1;
      steps.push(parseBracket(inner, fail));
    } else {
      fail(`unexpected ${JSON.stringify(c)}`);
    }
  }
  cache.set(expr, steps);
  return steps;
}

function findClose(text: string, open: number): number {
  let quote = '';
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  return -1;
}

function parseBracket(inner: string, fail: (what: string) => never): Step {
  if (inner === '*') return { kind: 'wildcard' };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  const quoted = /^(['"])(.*)\1$/s.exec(inner);
  if (quoted) return { kind: 'field', name: quoted[2] ?? '' };
  const filter = /^\?\(\s*@((?:\.[A-Za-z0-9_-]+|\[['"][^'"]+['"]\])+)\s*(?:(==|!=)\s*(.+?))?\s*\)$/s.exec(inner);
  if (!filter) return fail(`unsupported bracket expression [${inner}]`);
  // Group 1 always takes part in a match, group 3 whenever group 2 does; each path part is group 1 or 2.
  const [, pathText = '', op, literal = ''] = filter;
  const path = [...pathText.matchAll(/\.([A-Za-z0-9_-]+)|\[['"]([^'"]+)['"]\]/g)].map((m) => m[1] ?? m[2] ?? '');
  if (!op) return { kind: 'exists', path };
  return { kind: 'filter', path, op: op as '==' | '!=', value: parseLiteral(literal, fail) };
}

function parseLiteral(text: string, fail: (what: string) => never): unknown {
  const t = text.trim();
  const q = /^(['"])(.*)\1$/s.exec(t);
  if (q) return q[2];
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && Number.isFinite(Number(t))) return Number(t);
  return fail(`unsupported filter value ${t}`);
}

function get(value: unknown, path: string[]): unknown {
  let cur = value;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function children(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object') return Object.values(value);
  return [];
}

export function evaluateJsonPath(expr: string, root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of parseJsonPath(expr)) {
    const next: unknown[] = [];
    for (const v of current) {
      switch (step.kind) {
        case 'field':
          if (v !== null && typeof v === 'object' && !Array.isArray(v) && step.name in (v as object)) {
            next.push((v as Record<string, unknown>)[step.name]);
          }
          break;
        case 'index':
          if (Array.isArray(v)) {
            const idx = step.index < 0 ? v.length + step.index : step.index;
            if (idx >= 0 && idx < v.length) next.push(v[idx]);
          }
          break;
        case 'wildcard':
          next.push(...children(v));
          break;
        case 'exists':
          next.push(...children(v).filter((c) => get(c, step.path) !== undefined));
          break;
        case 'filter':
          next.push(
            ...children(v).filter((c) => {
              const got = get(c, step.path);
              if (got === undefined) return false;
              return step.op === '==' ? got === step.value : got !== step.value;
            }),
          );
          break;
      }
    }
    current = next;
  }
  return current;
}
