/**
 * `agent etcd-proxy …`: the agent image's second program (agent/main.ts hands the arguments over). Exit
 * codes as the agent's: 0 after SIGTERM/SIGINT, 2 on a usage error, 1 when it cannot start.
 */
import { createLogger, errorText } from '../log.ts';
import { UsageError } from '../usage-error.ts';
import { parseEtcdProxyArgs, type EtcdProxyOptions } from './options.ts';

export async function proxyMain(argv: readonly string[], stopRequested: Promise<string>): Promise<number> {
  let options: EtcdProxyOptions;
  try {
    options = parseEtcdProxyArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`agent etcd-proxy: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const log = createLogger({ level: options.logLevel, base: { component: 'pool-spirit-etcd-proxy' } });
  let proxy;
  try {
    const { startEtcdProxy } = await import('./proxy.ts');
    proxy = await startEtcdProxy({ ...options, logger: log });
  } catch (err) {
    log.error('etcd proxy cannot start', { error: errorText(err) });
    return 1;
  }
  const signal = await stopRequested;
  log.info('stopping', { signal });
  await proxy.stop();
  return 0;
}
