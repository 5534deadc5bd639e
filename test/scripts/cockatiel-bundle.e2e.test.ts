import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Metafile } from 'esbuild';
import { describe, expect, it, onTestFinished } from 'vitest';
import { NODE_22 } from '../../dev/bench/bundles.ts';
import { buildBundle, readServerlessBuild } from '../../scripts/bundle-functions.ts';
import { functionBundles, shippedInputs } from '../support/function-bundles.ts';

/**
 * serverless.yml aliases cockatiel to its ES build: its package's `main` (what a Node-platform build picks) is
 * CommonJS, which esbuild cannot tree-shake, so every function evaluated the circuit breaker, bulkhead and
 * fallback policies it never uses (docs/deploy.md, load time). The functions must ship the ES build only,
 * and the apiserver client's retry policy, bundled exactly as `npm run package` bundles it, must still
 * retry what is transient (a timed-out attempt included: `instanceof TaskCancelledError` across the build),
 * and stop on what is not.
 */
const run = promisify(execFile);
const build = readServerlessBuild();
const ES_BUILD = 'node_modules/cockatiel/dist/esm/';
const COCKATIEL = 'node_modules/cockatiel/';
const bundles = functionBundles('ps-cockatiel-');

/** cockatiel's files that put code into the build, from the package root. */
function shippedCockatiel(metafile: Metafile): string[] {
  return [...shippedInputs(metafile)]
    .filter((input) => input.includes(COCKATIEL))
    .map((input) => input.slice(input.indexOf(COCKATIEL)))
    .sort();
}

describe('cockatiel in the function bundles', () => {
  it('ships the ES build, tree-shaken to the retry and timeout policies', async () => {
    const files = shippedCockatiel((await bundles.build('reconcile')).metafile);
    expect(files.length, 'reconcile retries apiserver calls with cockatiel').toBeGreaterThan(0);
    expect(
      files.filter((f) => !f.startsWith(ES_BUILD)),
      'cockatiel files outside its ES build',
    ).toEqual([]);
    expect(files.filter((f) => /CircuitBreaker|Bulkhead|Fallback/.test(f))).toEqual([]);
    expect(files).toContain(`${ES_BUILD}RetryPolicy.js`);
    expect(files).toContain(`${ES_BUILD}TimeoutPolicy.js`);
  });

  it('retries a transient failure and a timed-out attempt, and stops on a permanent one, once bundled', async () => {
    const outDir = await mkdtemp(join(tmpdir(), 'ps-retry-probe-'));
    onTestFinished(() => rm(outDir, { recursive: true, force: true }));
    const probe = await buildBundle(
      build,
      {
        name: 'retry-probe',
        contents: [
          "import { retryPolicy } from './adapters/kubernetes/retry.ts';",
          'const fast = { initialDelayMs: 1, maxDelayMs: 1 };',
          'const out = {};',
          'let calls = 0;',
          "out.transient = await retryPolicy({ ...fast, maxAttempts: 3 }).execute(() => { calls++; if (calls < 3) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' }); return 'third'; });",
          'out.transientCalls = calls;',
          'calls = 0;',
          "try { await retryPolicy({ ...fast, maxAttempts: 3 }).execute(() => { calls++; throw Object.assign(new Error('forbidden'), { code: 403 }); }); } catch (err) { out.permanent = err.message; }",
          'out.permanentCalls = calls;',
          'calls = 0;',
          // The first attempt never settles: only the policy's timeout can end it.
          "out.timedOut = await retryPolicy({ ...fast, maxAttempts: 2, attemptTimeoutMs: 50 }).execute(() => { calls++; return calls === 1 ? new Promise(() => {}) : 'second'; });",
          'out.timedOutCalls = calls;',
          'process.stdout.write(JSON.stringify(out));',
        ].join('\n'),
      },
      join(outDir, 'retry-probe'),
    );
    expect(shippedCockatiel(probe.metafile).filter((f) => !f.startsWith(ES_BUILD))).toEqual([]);
    const { stdout } = await run(NODE_22, [probe.file], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({
      transient: 'third',
      transientCalls: 3,
      permanent: 'forbidden',
      permanentCalls: 1,
      timedOut: 'second',
      timedOutCalls: 2,
    });
  });
});
