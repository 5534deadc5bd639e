import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the summary names: where the suite's time budget goes. */
const SLOWEST_SHOWN = 10;

/**
 * Prints the slowest test files, then the closing `N passed, N failed` line that CI reads (vitest's own
 * summary is not recognised).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const slowest = testModules
      .map((mod) => ({ file: mod.relativeModuleId, seconds: mod.diagnostic().duration / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST_SHOWN);
    if (slowest.length > 1) {
      process.stdout.write('\nslowest test files (tests and hooks, s):\n');
      for (const { file, seconds } of slowest) process.stdout.write(`${seconds.toFixed(1).padStart(7)}  ${file}\n`);
    }
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
