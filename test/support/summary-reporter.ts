import type { Reporter, TestModule } from 'vitest/node';

/** Prints the closing `N passed, N failed` line that CI reads (vitest's own summary is not recognised). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let casesInModule = 0;
      for (const test of mod.children.allTests()) {
        casesInModule += 1;
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that fails to load has no test cases; it must still count as a failure.
      if (casesInModule === 0 && mod.state() === 'failed') failed += 1;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
