/**
 * The local API against the real kube-apiserver v1.36.3: the differential corpus (fixtures/corpus.json)
 * replayed on both, and every difference must be one that docs/local-kube-api.md lists (differences.json,
 * one entry each). A new difference fails; so does a listed one no longer seen (take it off the list).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBook, type Measurement, measure } from './measure.ts';

const book = loadBook();
let m: Measurement;

beforeAll(async () => {
  m = await measure(undefined, book);
}, 90_000);

const show = (ds: Measurement['unexplained']) =>
  ds
    .map(
      (d) =>
        `${d.request} ${d.call}\n    ${d.path} (${d.side}) local=${JSON.stringify(d.local)?.slice(0, 200)} real=${JSON.stringify(d.real)?.slice(0, 200)}`,
    )
    .join('\n');

describe('the local API answers the corpus as kube-apiserver v1.36.3 does, but for listed differences', () => {
  it('replays every request of the corpus on both backends', () => {
    const total = JSON.parse(readFileSync(new URL('./fixtures/corpus.json', import.meta.url), 'utf8')).cases.reduce(
      (n: number, c: { requests: unknown[] }) => n + c.requests.length,
      0,
    );
    expect(m.requests).toBe(total);
    expect(total).toBeGreaterThan(150);
  });

  it('shows no difference that is not listed', () => {
    expect(m.unexplained, `unlisted differences:\n${show(m.unexplained)}`).toEqual([]);
  });

  it('sees every listed difference (a fixed one leaves the list)', () => {
    expect(m.stale).toEqual([]);
  });

  it('lists each difference in docs/local-kube-api.md, and each fix names its test', () => {
    const doc = readFileSync(new URL('../../../docs/local-kube-api.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Measured differences from kube-apiserver v1.36.3'));
    expect(section.length).toBeLessThan(doc.length);
    for (const e of [...book.listed, ...book.fixed]) expect(section, `docs entry for ${e.id}`).toContain(`\`${e.id}\``);
    for (const f of book.fixed) expect(f.fix).toMatch(/test\/\S+\.test\.ts/);
  });
});
