/**
 * `agent etcd-proxy …`: the agent image's second program (agent/main.ts hands the arguments over). Exit
 * codes as the agent's: 0 after SIGTERM/SIGINT, 2 on a usage error, 1 when it cannot start.
 */
import { createLogger, errorText } from '../log.ts';
import { UsageError } from '../usage-error.ts';
import { type EtcdProxyOptions, parseEtcdProxyArgs } from './options.ts';
import type { RunningEtcdProxy } from './proxy.ts';

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
  let proxy: RunningEtcdProxy;
  try {
    const { startEtcdProxy } = await import('./proxy.ts');
    proxy = await startEtcdProxy({ ...options, logger: log });
  } catch (err) {
    log.error('etcd proxy cannot start', { error: errorText(err) });
    return 1;
  }
  // A proxy that cannot listen (its port taken) must end, so the kubelet restarts it, not linger unready.
  const cannotListen = proxy.listening.then(
    () => new Promise<never>(() => undefined),
    (err: unknown) => err,
  );
  const first = await Promise.race([
    stopRequested.then((signal) => ({ signal })),
    cannotListen.then((err) => ({ err })),
  ]);
  await proxy.stop();
  if ('err' in first) {
    log.error('etcd proxy cannot listen', { error: errorText(first.err) });
    return 1;
  }
  log.info('stopped', { signal: first.signal });
  return 0;
}
