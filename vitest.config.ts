import { defineConfig } from 'vitest/config';

/**
 * End-to-end tests are named `*.e2e.test.ts`: they start the built Kubernetes binaries, a local fleet, the
 * CLI as a process or the packager. Everything else is the `unit` project, which runs in seconds:
 * `npx vitest run --project unit`. `vitest run` (what `npm test` runs) runs both.
 */
const E2E = 'test/**/*.e2e.test.ts';

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores, three files at a time: most end-to-end files spend their time waiting on real timers (Lease
    // durations, the node monitor's grace period, pod starts), not on the CPU; a fourth would turn that idle
    // time into contention between etcd, kube-apiserver and the code under test.
    maxWorkers: 3,
    // Test files in one worker share loaded modules: re-importing the AWS SDK, client-node and the local
    // stack for every file cost more than half of the suite's time. Tests own their servers and state.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The local API's memory storage shares one parse of each value between its readers: frozen here, so a
    // reader that changes one in depth fails the test that made it (dev/local/kube-api/storage/memory.ts).
    env: { LOCAL_API_FREEZE_SHARED: '1' },
    // Reporters belong to the whole run, not to a project: the summary line is printed once.
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['node_modules/**', 'dev/bench/**', E2E] },
      },
      {
        extends: true,
        test: { name: 'e2e', include: [E2E], exclude: ['node_modules/**', 'dev/bench/**'] },
      },
    ],
  },
});
