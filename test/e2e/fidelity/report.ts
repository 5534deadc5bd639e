/**
 * Prints the local API's measured fidelity to kube-apiserver v1.36.3: the corpus run on both backends,
 * and how many differences were found, fixed and listed.
 *
 *   node test/e2e/fidelity/report.ts          # a summary
 *   node test/e2e/fidelity/report.ts --json   # counts and every difference, as JSON
 *   node test/e2e/fidelity/report.ts --raw    # every observed difference, one per line (to write the list)
 */
import { loadBook, measure } from './measure.ts';

const book = loadBook();
const m = await measure(undefined, book);
// An unexplained difference is not yet a counted one: each distinct path is reported as one more found.
const newPaths = new Set(m.unexplained.map((d) => d.path)).size;
const counts = {
  found: book.fixed.length + book.listed.length + newPaths,
  fixed: book.fixed.length,
  listed: book.listed.length,
  unexplained: m.unexplained.length,
};
const report = {
  counts,
  corpus: { requests: m.requests, seconds: m.seconds },
  fixed: book.fixed,
  listed: book.listed.map((e) => ({
    id: e.id,
    what: e.what,
    why: e.why,
    affects: e.affects,
    observed: m.hits[e.id] ?? 0,
  })),
  unexplained: m.unexplained,
  stale: m.stale,
};
if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
else if (process.argv.includes('--raw')) for (const d of m.differences) console.log(JSON.stringify(d));
else {
  console.log(
    `corpus: ${m.requests} requests; local ${m.seconds.local}s, real ${m.seconds.real}s (start ${m.seconds.startReal}s)`,
  );
  console.log(
    `differences found ${counts.found}: fixed ${counts.fixed}, listed ${counts.listed}, new ${newPaths} (${counts.unexplained} unexplained answers)`,
  );
  for (const e of report.listed) console.log(`  listed ${e.id}: ${e.what} (${e.observed} observed)`);
  for (const e of book.fixed) console.log(`  fixed  ${e.id}: ${e.what}`);
  for (const id of m.stale) console.log(`  STALE  ${id}: listed, but not observed`);
  for (const d of m.unexplained)
    console.log(
      `  NEW    ${d.request} ${d.call} ${d.path} (${d.side}) local=${JSON.stringify(d.local)?.slice(0, 120)} real=${JSON.stringify(d.real)?.slice(0, 120)}`,
    );
}
