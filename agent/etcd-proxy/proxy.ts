/**
 * The hub-facing etcd proxy of a yurt-coordinator-compatible pool (docs/decisions/0024-coordinator-etcd-auth.md).
 *
 * It ends each hub's TLS connection (client certificate required, from the trusted CA bundle), opens a TLS
 * connection of its own to etcd with its own certificate, and copies bytes between the two: gRPC, HTTP/2 and
 * etcd's HTTP endpoints pass through untouched (streams, leases, watches, messages of any size), but etcd sees
 * the proxy's CN, so every hub request runs as that one bounded etcd user. etcd's own grpc-proxy cannot do
 * this: it refuses a client certificate with a CN (it forwards its clients' auth tokens instead, and YurtHub
 * has none).
 *
 * Ordering without a window: the proxy listens only once etcd refuses its identity a read of
 * `refusedPrefix` (auth on, role bounded), and it checks that again for every connection, after its
 * connection to etcd is open and before it copies a byte. An etcd that restarted empty (auth off) is
 * therefore never reached through the proxy: the check fails and the hub's connection is closed.
 */
import { readFileSync } from 'node:fs';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { CredentialFiles } from '../credential-files.ts';
import { createLogger, errorText } from '../log.ts';
import { sleep } from '../sleep.ts';
import { type EtcdProxyOptions, hostPort } from './options.ts';
import { probeBoundary } from './probe.ts';

export interface EtcdProxyStats {
  /** When etcd first refused the proxy's identity the probe read, and when the proxy started listening. */
  boundedAt?: string;
  listeningAt?: string;
  /** Hub connections accepted (TLS done), relayed to etcd, and closed because the check failed. */
  accepted: number;
  relayed: number;
  refused: number;
  /** TLS handshakes a client failed (e.g. a certificate from a CA the proxy does not trust). */
  handshakeFailures: number;
  /** Connections being relayed now. */
  active: number;
}

export interface RunningEtcdProxy {
  readonly stats: EtcdProxyStats;
  /** Settles once the proxy listens (never before etcd bounds its identity); rejects if stopped first. */
  readonly listening: Promise<void>;
  stop(): Promise<void>;
}

export async function startEtcdProxy(options: EtcdProxyOptions): Promise<RunningEtcdProxy> {
  const log =
    options.logger ?? createLogger({ level: options.logLevel, base: { component: 'pool-spirit-etcd-proxy' } });
  const read = (file: string) => readFileSync(file);
  const files = [options.certFile, options.keyFile, options.etcdCaFile, options.trustedCaFile];
  const load = () => ({
    identity: { cert: read(options.certFile), key: read(options.keyFile) },
    etcdCa: read(options.etcdCaFile),
    trustedCa: read(options.trustedCaFile),
  });
  // Renewed certificates arrive through the Secret volume while the pod runs (no restart: etcd is in memory):
  // new connections, both legs, use what the files hold now.
  let material = load();
  const credentials = new CredentialFiles(files);
  const etcd = hostPort(options.etcdEndpoint);
  const listen = hostPort(options.listenUrl);
  const stats: EtcdProxyStats = { accepted: 0, relayed: 0, refused: 0, handshakeFailures: 0, active: 0 };
  const sockets = new Set<TLSSocket>();
  const stopping = new AbortController();
  const probe = () =>
    probeBoundary({ url: options.etcdEndpoint, ca: material.etcdCa, ...material.identity }, options.refusedPrefix);

  const server = createServer(
    {
      ...material.identity,
      ca: material.trustedCa,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
      // Whatever the hub negotiates is what the proxy asks etcd for (h2 for gRPC, HTTP/1.1 otherwise).
      ALPNProtocols: ['h2', 'http/1.1'],
    },
    (down) => {
      stats.accepted++;
      down.pause();
      const alpn = typeof down.alpnProtocol === 'string' ? [down.alpnProtocol] : undefined;
      const up = connect({
        host: etcd.host,
        port: etcd.port,
        ca: material.etcdCa,
        ...material.identity,
        ALPNProtocols: alpn,
      });
      const pair = [down, up];
      for (const s of pair) {
        sockets.add(s);
        s.setKeepAlive(true, 30_000);
        // gRPC's small frames (a request, its answer, pings) must not wait for Nagle's algorithm on either leg.
        s.setNoDelay(true);
        s.on('error', () => undefined);
        s.on('close', () => {
          sockets.delete(s);
          for (const other of pair) other.destroy();
        });
      }
      up.once('secureConnect', () => {
        // The check comes after this connection to etcd exists: an etcd restarted since would have closed it.
        void probe().then((bound) => {
          if (bound !== 'bounded' || down.destroyed || up.destroyed) {
            stats.refused++;
            log.warn('hub connection closed: etcd does not bound the proxy identity', { bound });
            for (const s of pair) s.destroy();
            return;
          }
          stats.relayed++;
          stats.active++;
          up.once('close', () => stats.active--);
          down.pipe(up);
          up.pipe(down);
          down.resume();
        });
      });
    },
  );
  server.on('tlsClientError', (err) => {
    stats.handshakeFailures++;
    log.debug('hub TLS handshake failed', { error: errorText(err) });
  });

  const listening = (async () => {
    let said = false;
    for (;;) {
      if (stopping.signal.aborted) throw new Error('etcd proxy stopped before it listened');
      const bound = await probe();
      if (bound === 'bounded') break;
      if (!said) log.info('not serving yet: etcd does not bound the proxy identity', { bound });
      said = true;
      await sleep(options.retryMs ?? 250, stopping.signal);
    }
    stats.boundedAt = new Date().toISOString();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    stats.listeningAt = new Date().toISOString();
    log.info('serving hubs: etcd bounds the proxy identity', { listen: options.listenUrl });
  })();
  // A stop before the first listen rejects `listening`; the caller that awaits it sees that.
  listening.catch(() => undefined);
  const reload = setInterval(() => {
    if (!credentials.changed()) return;
    try {
      material = load();
      server.setSecureContext({ ...material.identity, ca: material.trustedCa, minVersion: 'TLSv1.2' });
      log.info('certificates changed on disk: new connections use them');
    } catch (err) {
      log.warn('certificates changed on disk but cannot be loaded; keeping the previous ones', {
        error: errorText(err),
      });
    }
  }, options.credentialPollMs ?? CREDENTIAL_POLL_MS);

  let stopped: Promise<void> | undefined;
  return {
    stats,
    listening,
    stop: () =>
      (stopped ??= (async () => {
        stopping.abort();
        clearInterval(reload);
        await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
        for (const s of sockets) s.destroy();
      })()),
  };
}

/** As the agent's own credential watch: a kubelet takes up to a minute to update a Secret volume anyway. */
const CREDENTIAL_POLL_MS = 5_000;
