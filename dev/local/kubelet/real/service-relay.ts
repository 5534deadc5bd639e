/**
 * The `kubernetes` Service inside a real node's network namespace, in place of kube-proxy: listens on the
 * Service's address and port (an address of the namespace's loopback) and joins each connection to the
 * control plane as the namespace reaches it (127.0.0.1:<port>, relayed out by loopback-netns.ts). TLS passes
 * through untouched, so a pod's in-cluster client verifies the apiserver's own certificate (which names the
 * Service's address). Standalone (node: imports and ../../processes/join-sockets.ts only): `node service-relay.ts '{"listen":…,"target":…}'`.
 * The capacity probe runs the same relay inside a pod's network namespace, listening on a unix socket (a file
 * this machine's namespace can reach) and dialling a port of the pod's loopback (dev/local/capacity/real-node-target.ts).
 */
import { connect, createServer } from 'node:net';
import { joinSockets } from '../../processes/join-sockets.ts';

/** A TCP address, or a unix socket (the capacity probe's relays into a pod's network namespace). */
type Endpoint = { host: string; port: number } | { path: string };

const config = JSON.parse(process.argv[2] ?? '') as { listen: Endpoint; target: Endpoint };
const server = createServer((from) => joinSockets(from, connect(config.target)));
server.once('error', (err) => {
  process.stderr.write(`service-relay: ${err.message}\n`);
  process.exit(1);
});
server.listen(config.listen, () =>
  process.stdout.write(`service-relay: pid ${process.pid}; ${show(config.listen)} → ${show(config.target)}\n`),
);

function show(e: Endpoint): string {
  return 'path' in e ? e.path : `${e.host}:${e.port}`;
}
