/**
 * Joins two sockets both ways, closing both when either ends or fails: the core of every TCP/unix relay of the
 * local stack (the network-namespace relays and the real node's Service relay). node: imports only, so the
 * standalone relay scripts can import it.
 */
import type { Socket } from 'node:net';

export function joinSockets(a: Socket, b: Socket): void {
  const close = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', close).on('close', close);
  b.on('error', close).on('close', close);
  a.pipe(b);
  b.pipe(a);
}
