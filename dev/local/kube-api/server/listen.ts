/**
 * Starts a server listening (loopback unless told otherwise) and keeps its open sockets, so a stop can end
 * kept-alive connections and watches at once instead of waiting for clients to leave.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Listening {
  url: string;
  sockets: Set<Socket>;
}

export async function listen(
  server: Server,
  opts: { host?: string; port?: number; https: boolean },
): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return { url: `${opts.https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`, sockets };
}
