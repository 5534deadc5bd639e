/**
 * Ports for the local stack's child processes (etcd, kube-apiserver, YurtHub) to listen on.
 */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';

/**
 * Ports in our range that `fetch` refuses to connect to: the Fetch standard's "bad port" list (port blocking),
 * which Node's fetch (undici) enforces with `TypeError: fetch failed`, cause `bad port`. 10080 is the only
 * one of them at or above 10000. An etcd handed 10080 started fine and then never answered its health check
 * (CI: "etcd at http://127.0.0.1:10080 not healthy after 20000 ms (fetch failed)").
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([10080]);

/** Picks an offset in [0, bound): crypto's randomInt, or a fixed sequence in a test. */
export type PortDraw = (bound: number) => number;

/**
 * Ports for a child process to listen on, free right now; all held open together so the same port is not
 * handed out twice. They are drawn at random from below the kernel's ephemeral range
 * (net.ipv4.ip_local_port_range, 32768–60999 by default): a port the kernel handed out for a listen on
 * port 0 comes from that range, and between our close and the child's bind an outgoing connection anywhere
 * on the machine could take it as its source port. With tests running side by side that happened (etcd:
 * "bind: address already in use").
 */
export async function freePorts(count: number, draw: PortDraw = randomInt): Promise<number[]> {
  const { min, max } = listenPortRange();
  const held: Server[] = [];
  try {
    for (let tries = 0; held.length < count; tries++) {
      if (tries >= count * 100) throw new Error(`freePorts: no ${count} free ports found in ${min}-${max}`);
      const port = min + draw(max - min + 1);
      if (FETCH_BLOCKED_PORTS.has(port)) continue;
      const server = await listenOn(port);
      if (server) held.push(server);
    }
    return held.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/** From 10000 up to just below the ephemeral range (or 10000–32767 where the kernel does not say). */
function listenPortRange(): { min: number; max: number } {
  let ephemeralMin = 32_768;
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 11_000) ephemeralMin = first;
  } catch {
    // not Linux: the usual default
  }
  return { min: 10_000, max: ephemeralMin - 1 };
}

/** A server listening on `port` of 127.0.0.1, or undefined when the port is taken. */
function listenOn(port: number): Promise<Server | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
