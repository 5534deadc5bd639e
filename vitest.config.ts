import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', 'bench/**'],
    pool: 'forks',
    // Two cores: more workers only add contention between etcd, kubectl and the API under test.
    maxWorkers: 2,
    // Test files in one worker share loaded modules: re-importing the AWS SDK, client-node and the local
    // stack for every file cost more than half of the suite's time. Tests own their servers and state.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
