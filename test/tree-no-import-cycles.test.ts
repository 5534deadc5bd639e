import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No module of the repository imports itself through others, type-only imports included: a cycle makes load
 * order matter and layers blur (the local API once had an 8-file one through its auth gate and store). Relative
 * `import`/`export ... from` specifiers are the edges; packages are not followed.
 */
const ROOT = join(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', '.cache', '.serverless', '.esbuild', '.git']);
const SPECIFIER = /(?:import|export)\s+(?:type\s+)?(?:[^;'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gs;

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, out);
    else if (entry.name.endsWith('.ts')) out.push(relative(ROOT, path));
  }
  return out;
}

function importGraph(files: Map<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const edges = [...text.matchAll(SPECIFIER)]
      .map((m) => normalize(join(dirname(file), m[1] ?? '')))
      .filter((target) => files.has(target));
    graph.set(file, edges);
  }
  return graph;
}

/** Strongly connected components of more than one module (Tarjan), each sorted. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph', () => {
  it('finds a cycle where there is one, type-only imports included (the check itself)', () => {
    const files = new Map([
      ['a.ts', "import type { B } from './b.ts';"],
      ['b.ts', "export { c } from './c.ts';"],
      ['c.ts', "import {\n  a,\n} from './a.ts';"],
      ['d.ts', "import { a } from './a.ts';"],
    ]);
    expect(cycles(importGraph(files))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('has no cycle in the repository', () => {
    const files = new Map(sources(ROOT).map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
    const graph = importGraph(files);
    // Guards the walk: a broken one would find no modules or no edges and pass vacuously.
    expect(files.size).toBeGreaterThan(500);
    expect([...graph.values()].flat().length).toBeGreaterThan(2000);
    expect(cycles(graph)).toEqual([]);
  });
});
