/**
 * The inside half of loopback-netns.ts, run by Node as the first process of a new network namespace (its
 * loopback brought up just before). Unix sockets live in the file system, which both namespaces share; TCP
 * stays on each namespace's own 127.0.0.1:
 *
 *  - inbound port P: listens on `<dir>/in-P.sock` and joins each connection to 127.0.0.1:P in here;
 *  - outbound port Q: listens on 127.0.0.1:Q in here and joins each connection to `<dir>/out-Q.sock`.
 *
 * Writes `<dir>/ready` once every listener is up. Standalone on purpose (node: imports and ../processes/join-sockets.ts only): it runs as its
 * own script, `node netns-relay.ts '{"dir":…,"inbound":[…],"outbound":[…]}'`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { joinSockets } from '../processes/join-sockets.ts';

interface RelayConfig {
  dir: string;
  inbound: number[];
  outbound: number[];
}

function listen(server: Server, target: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(target, () => resolve());
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as RelayConfig;
  const listening: Array<Promise<void>> = [];
  for (const port of config.inbound) {
    const server = createServer((from) => joinSockets(from, connect({ host: '127.0.0.1', port })));
    listening.push(listen(server, { path: join(config.dir, `in-${port}.sock`) }));
  }
  for (const port of config.outbound) {
    const server = createServer((from) => joinSockets(from, connect({ path: join(config.dir, `out-${port}.sock`) })));
    listening.push(listen(server, { host: '127.0.0.1', port }));
  }
  await Promise.all(listening);
  writeFileSync(join(config.dir, 'ready.tmp'), `${process.pid}\n`);
  renameSync(join(config.dir, 'ready.tmp'), join(config.dir, 'ready'));
  process.stdout.write(
    `netns-relay: pid ${process.pid}; inbound ${config.inbound.join(',')}; outbound ${config.outbound.join(',')}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`netns-relay: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
