/**
 * A network namespace of its own for a binary that listens on every address (yurt-manager v1.5.1's webhook
 * server binds 0.0.0.0: `Host: "0.0.0.0"` is hard-coded in cmd/yurt-manager/app/manager.go, no flag changes
 * it). In the namespace the only interface is its own loopback, so the wildcard bind reaches nothing but
 * 127.0.0.1 there; relays join chosen ports of the two loopbacks, and nothing else is reachable either way:
 *
 *  - inbound: this machine's 127.0.0.1:P → the namespace's 127.0.0.1:P (webhook, health probe, metrics);
 *  - outbound: the namespace's 127.0.0.1:Q → this machine's 127.0.0.1:Q (the kube-apiserver).
 *
 * Same port numbers on both sides, so addresses read the same from either (a webhook URL
 * `https://127.0.0.1:P/…` the apiserver dials, a kubeconfig `https://127.0.0.1:Q` the binary dials). TLS
 * passes through untouched: the relays copy bytes.
 *
 * The namespace is held by the inside relay (netns-relay.ts, started under `unshare --net`); binaries join it
 * with `nsenter --net`. Both get SIGKILL when this process dies (setpriv --pdeathsig), as etcd does, and the
 * usual exit cleanup (dev/local/processes) kills them on a normal exit. Needs root (or CAP_SYS_ADMIN) for
 * `unshare --net`, and util-linux's unshare, nsenter and setpriv, and iproute2's `ip`.
 */
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { joinSockets } from '../processes/join-sockets.ts';
import { type ProcessExit, type SupervisedProcess, spawnSupervised, waitUntilReady } from '../processes/supervise.ts';

const RELAY_SCRIPT = fileURLToPath(new URL('./netns-relay.ts', import.meta.url));
const TOOLS = {
  env: ['/usr/bin/env'],
  setpriv: ['/usr/bin/setpriv'],
  unshare: ['/usr/bin/unshare'],
  nsenter: ['/usr/bin/nsenter'],
  sh: ['/bin/sh'],
  ip: ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'],
} as const;
type Tool = keyof typeof TOOLS;

export interface LoopbackNamespaceOptions {
  /** Holds the relays' unix sockets and the inside relay's log; keep the path short (a socket path has ≤ 107 bytes). */
  dir: string;
  /** Ports of this machine's 127.0.0.1 that reach the namespace's 127.0.0.1. */
  inbound: readonly number[];
  /** Ports of the namespace's 127.0.0.1 that reach this machine's 127.0.0.1. */
  outbound: readonly number[];
  readyDeadlineMs?: number;
}

export interface LoopbackNamespace {
  /** The inside relay, which holds the namespace. */
  pid: number;
  /** `/proc/<pid>/ns/net` */
  netnsPath: string;
  /**
   * The command line that runs `binary args` inside the namespace with exactly `env` (nothing inherited), and
   * SIGKILL if this process dies: `env -i K=V… setpriv --pdeathsig KILL -- nsenter --net=… -- binary args`.
   * Every step execs the next, so the pid of the spawned command is the binary's.
   */
  command(
    binary: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
  ): { file: string; args: string[] };
  /** Settles if the inside relay ends without stop(). */
  exited: Promise<ProcessExit>;
  stop(): Promise<void>;
}

export class LoopbackNamespaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoopbackNamespaceError';
  }
}

export async function startLoopbackNamespace(opts: LoopbackNamespaceOptions): Promise<LoopbackNamespace> {
  const tool = Object.fromEntries(Object.keys(TOOLS).map((t) => [t, findTool(t as Tool)])) as Record<Tool, string>;
  assertPdeathsig(tool.setpriv);
  await mkdir(opts.dir, { recursive: true, mode: 0o700 });
  for (const port of opts.inbound) await rm(join(opts.dir, `in-${port}.sock`), { force: true });
  await rm(join(opts.dir, 'ready'), { force: true });
  const servers: Server[] = [];
  let relay: SupervisedProcess | undefined;
  const stop = async () => {
    await relay?.stop();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  };
  try {
    // This side first: the namespace's first outbound connection must find its socket.
    for (const port of opts.outbound) {
      const path = join(opts.dir, `out-${port}.sock`);
      await rm(path, { force: true });
      servers.push(await listen((from) => joinSockets(from, connect({ host: '127.0.0.1', port })), { path }));
    }
    for (const port of opts.inbound) {
      const path = join(opts.dir, `in-${port}.sock`);
      servers.push(await listen((from) => joinSockets(from, connect({ path })), { host: '127.0.0.1', port }));
    }
    const config = JSON.stringify({ dir: opts.dir, inbound: opts.inbound, outbound: opts.outbound });
    relay = spawnSupervised(
      'netns-relay',
      tool.env,
      [
        '-i',
        `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`,
        tool.setpriv,
        '--pdeathsig',
        'KILL',
        '--',
        tool.unshare,
        '--net',
        '--',
        tool.sh,
        '-c',
        `${tool.ip} link set lo up && exec "$0" "$@"`,
        process.execPath,
        RELAY_SCRIPT,
        config,
      ],
      join(opts.dir, 'netns-relay.log'),
    );
    const started = relay;
    await waitUntilReady(
      started,
      async () => (existsSync(join(opts.dir, 'ready')) ? 200 : 503),
      Date.now() + (opts.readyDeadlineMs ?? 10_000),
      (exit) =>
        new LoopbackNamespaceError(
          `the network namespace for a wildcard-binding binary could not be made (${exit.signal ?? `code ${exit.exitCode}`}): ` +
            `\`unshare --net\` needs root or CAP_SYS_ADMIN, and \`ip\` must bring its loopback up. It said:\n${exit.lastLines}`,
        ),
    );
    const netnsPath = `/proc/${started.pid}/ns/net`;
    return {
      pid: started.pid,
      netnsPath,
      command(binary, args, env) {
        const pairs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
        return {
          file: tool.env,
          args: [
            '-i',
            ...pairs,
            tool.setpriv,
            '--pdeathsig',
            'KILL',
            '--',
            tool.nsenter,
            `--net=${netnsPath}`,
            '--',
            binary,
            ...args,
          ],
        };
      },
      exited: started.exited,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function findTool(name: Tool): string {
  for (const path of TOOLS[name]) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // next candidate
    }
  }
  throw new LoopbackNamespaceError(
    `${name} not found (looked at ${TOOLS[name].join(', ')}); a loopback-only network namespace needs util-linux ` +
      '(unshare, nsenter, setpriv) and iproute2 (ip): install them (apt-get install util-linux iproute2)',
  );
}

function assertPdeathsig(setpriv: string): void {
  if (!readFileSync(setpriv).includes('pdeathsig')) {
    throw new LoopbackNamespaceError(
      `${setpriv} has no --pdeathsig: without it a child could outlive this process; install util-linux ≥ 2.33`,
    );
  }
}

function listen(
  onConnection: (socket: Socket) => void,
  target: { port: number; host: string } | { path: string },
): Promise<Server> {
  const server = createServer(onConnection);
  return new Promise((resolve, reject) => {
    server.once('error', (err) =>
      reject(new LoopbackNamespaceError(`relay could not listen on ${JSON.stringify(target)}: ${err.message}`)),
    );
    server.listen(target, () => resolve(server));
  });
}
