/**
 * The `kubernetes` Service inside a real node's network namespace, in place of kube-proxy: listens on the
 * Service's address and port (an address of the namespace's loopback) and joins each connection to the
 * control plane as the namespace reaches it (127.0.0.1:<port>, relayed out by loopback-netns.ts). TLS passes
 * through untouched, so a pod's in-cluster client verifies the apiserver's own certificate (which names the
 * Service's address). Standalone (node: imports and ../../processes/join-sockets.ts only): `node service-relay.ts '{"listen":…,"target":…}'`.
 */
import { connect, createServer } from 'node:net';
import { joinSockets } from '../../processes/join-sockets.ts';

interface Endpoint {
  host: string;
  port: number;
}

const config = JSON.parse(process.argv[2] ?? '') as { listen: Endpoint; target: Endpoint };
const server = createServer((from) => joinSockets(from, connect(config.target)));
server.once('error', (err) => {
  process.stderr.write(`service-relay: ${err.message}\n`);
  process.exit(1);
});
server.listen(config.listen, () =>
  process.stdout.write(
    `service-relay: pid ${process.pid}; ${config.listen.host}:${config.listen.port} → ${config.target.host}:${config.target.port}\n`,
  ),
);
