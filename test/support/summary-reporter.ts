import type { Reporter, TestModule } from 'vitest/node';

/** Prints the closing `N passed, N failed` line that CI reads (vitest's own summary is not recognised). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that fails to load, or whose beforeAll fails (vitest then reports its cases as skipped),
      // must still count as a failure.
      const anyCaseFailed = [...mod.children.allTests()].some((t) => t.result().state === 'failed');
      if (mod.state() === 'failed' && !anyCaseFailed) failed += 1;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
