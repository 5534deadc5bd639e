/**
 * The agent's command line: `node agent/main.ts --kubeconfig FILE --poolspirit NAME ...` (see USAGE in
 * options.ts). Exit codes: 0 after SIGTERM/SIGINT, 2 on a usage error, 1 when the agent cannot start.
 * `node agent/main.ts etcd-proxy …` runs the yurt-coordinator etcd proxy instead (etcd-proxy/main.ts): one
 * image, two containers.
 */
import { fileURLToPath } from 'node:url';
import { ETCD_PROXY_COMMAND } from '../core/yurt-coordinator/contract.ts';
import type { RunningAgent } from './agent.ts';
import { CredentialFiles, credentialFilesOf, nextCredentialChange } from './credential-files.ts';
import { createLogger, errorText } from './log.ts';
import type { AgentOptions } from './options.ts';
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
  let options: AgentOptions;
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
  let agent: RunningAgent;
  // Loaded after the flags are checked: the API and etcd clients take seconds to load on a busy node.
  const start = async () => (await import('./agent.ts')).startAgent({ ...options, logger: log });
  // The baseline is what the agent is about to read: a change made while it starts is still a change.
  const credentials = new CredentialFiles(credentialFilesOf(options));
  try {
    agent = await start();
  } catch (err) {
    log.error('agent cannot start', { error: errorText(err) });
    return 1;
  }
  const watching = new AbortController();
  try {
    for (;;) {
      const next = await Promise.race([
        stopRequested.then((signal) => ({ signal })),
        nextCredentialChange(credentials, CREDENTIAL_POLL_MS, watching.signal).then(() => undefined),
      ]);
      if (next) {
        log.info('stopping', { signal: next.signal });
        await agent.stop();
        return 0;
      }
      log.info('credentials changed on disk (renewed certificates): restarting the agent with them');
      await agent.stop();
      try {
        agent = await start();
      } catch (err) {
        // The container restart (with its back-off) reads the files again.
        log.error('agent cannot restart with the new credentials', { error: errorText(err) });
        return 1;
      }
    }
  } finally {
    watching.abort();
  }
}

/** The kubelet updates a Secret volume within about a minute; a few seconds more are nothing next to that. */
const CREDENTIAL_POLL_MS = 5_000;

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
