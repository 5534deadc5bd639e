/**
 * A TCP forwarder on 127.0.0.1 that can be cut and restored, standing in for the network between a node and
 * what it talks to: a Service VIP that stays put while the pool-spirit behind it restarts on new ports (the
 * target is read per connection), or one node's path to the host that a test cuts while other nodes keep
 * theirs. TLS passes through untouched; cutting destroys the open connections and refuses new ones.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Link {
  /** 127.0.0.1:<port> clients dial. */
  port: number;
  url(scheme: 'https'): string;
  cut(): void;
  restore(): void;
  isCut(): boolean;
  close(): Promise<void>;
}

export async function startLink(target: () => { host: string; port: number }): Promise<Link> {
  const open = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    let to: { host: string; port: number };
    try {
      to = target();
    } catch {
      // Nothing to forward to (the target is restarting or gone): refused, as a Service without endpoints.
      client.destroy();
      return;
    }
    const upstream = connect(to.port, to.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('link: no port');
  return {
    port: address.port,
    url: (scheme) => `${scheme}://127.0.0.1:${address.port}`,
    cut() {
      cut = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    restore() {
      cut = false;
    },
    isCut: () => cut,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** host:port of an https://host:port URL. */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}
