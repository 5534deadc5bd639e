/**
 * The agent's command line: `node agent/main.ts --kubeconfig FILE --poolspirit NAME ...` (see USAGE in
 * options.ts). Exit codes: 0 after SIGTERM/SIGINT, 2 on a usage error, 1 when the agent cannot start.
 * `node agent/main.ts etcd-proxy …` runs the yurt-coordinator etcd proxy instead (etcd-proxy/main.ts): one
 * image, two containers.
 */
import { fileURLToPath } from 'node:url';
import { ETCD_PROXY_COMMAND } from '../core/yurt-coordinator/contract.ts';
import { createLogger, errorText } from './log.ts';
import { UsageError } from './usage-error.ts';

/** Runs until `stopRequested` settles (with the signal's name); resolves to the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  stopRequested: Promise<string>,
): Promise<number> {
  // The proxy loads only what it runs: the agent's flag parser (zod, core defaults) stays unloaded.
  if (argv[0] === ETCD_PROXY_COMMAND) {
    const { proxyMain } = await import('./etcd-proxy/main.ts');
    return proxyMain(argv.slice(1), stopRequested);
  }
  const { parseAgentArgs } = await import('./options.ts');
  let options;
  try {
    options = parseAgentArgs(argv, env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`agent: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = createLogger({
    level: options.logLevel,
    base: { component: 'pool-spirit-agent', poolspirit: options.poolSpirit, pool: options.pool },
  });
  let agent;
  try {
    // Loaded after the flags are checked: the API and etcd clients take seconds to load on a busy node.
    const { startAgent } = await import('./agent.ts');
    agent = await startAgent({ ...options, logger: log });
  } catch (err) {
    log.error('agent cannot start', { error: errorText(err) });
    return 1;
  }
  const signal = await stopRequested;
  log.info('stopping', { signal });
  await agent.stop();
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // Listening from the start: a SIGTERM while the clients load still ends in a clean stop.
  const signalled = new Promise<string>((resolve) => {
    for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve(sig));
  });
  main(process.argv.slice(2), process.env, signalled).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`agent: ${errorText(err)}\n`);
      process.exit(1);
    },
  );
}
