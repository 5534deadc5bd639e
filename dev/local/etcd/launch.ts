/**
 * Starts a private single-member etcd (the pinned 3.6 build of `npm run kube-bins`) on loopback, with its data dir in
 * /dev/shm the way a pool-spirit keeps it (an emptyDir with `medium: Memory`). Used by the local Kubernetes
 * API's etcd storage, its tests, and the process-mode kubelet of a local pool-spirit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants as fsConstants, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { etcdFlags } from '../../../core/poolspirit/etcd-flags.ts';
import { kubeBinaryPath } from '../kube-bins/index.ts';
import { freePorts } from '../processes/free-ports.ts';

export const ETCD_BINARY = kubeBinaryPath('etcd');
const SETPRIV = '/usr/bin/setpriv';
const SHM_ROOT = '/dev/shm';
/** Every data dir this module creates starts with this, followed by the owning pid (see sweepOrphans). */
const DIR_PREFIX = 'pool-spirit-etcd-';
const LOG_FILE = 'etcd.log';
const HEALTH_DEADLINE_MS = 20_000;
const PORT_ATTEMPTS = 5;

export { etcdFlags };

/** `{ 'snapshot-count': '5000' }` → `['--snapshot-count=5000']`. */
export function flagArgs(flags: Readonly<Record<string, string>>): string[] {
  return Object.entries(flags).map(([name, value]) => `--${name}=${value}`);
}

export interface StartEtcdOptions {
  /**
   * Data dir to use (created if missing; the caller owns it and it is kept on stop). Default: a fresh
   * directory under /dev/shm, removed on stop.
   */
  dataDir?: string;
  /** Appended after the defaults (`etcdFlags.product` and the listener flags); a repeated flag wins. */
  extraArgs?: string[];
  /** Member name; default `default`. */
  name?: string;
}

export interface RunningEtcd {
  /** Client URL, e.g. `http://127.0.0.1:40123`. */
  endpoint: string;
  clientPort: number;
  pid: number;
  dataDir: string;
  /** Path of the file etcd's stdout and stderr go to. */
  logFile: string;
  /** Settles when etcd ends, saying how (`code 0`, `signal SIGKILL`): a crash is visible to the owner. */
  exited: Promise<string>;
  /** Kills etcd and removes the data dir it created; safe to call more than once. */
  stop(): Promise<void>;
}

export class EtcdStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EtcdStartError';
  }
}

export async function startEtcd(opts: StartEtcdOptions = {}): Promise<RunningEtcd> {
  await assertEtcdInstalled();
  const name = opts.name ?? 'default';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    throw new TypeError(`startEtcd: name must be letters, digits, '.', '_' or '-'; got ${JSON.stringify(name)}`);
  }
  const ownsDir = opts.dataDir === undefined;
  if (ownsDir) await sweepOrphans();
  const dataDir = opts.dataDir ?? (await mkdtemp(join(SHM_ROOT, `${DIR_PREFIX}${process.pid}-`)));
  if (!ownsDir) await mkdir(dataDir, { recursive: true });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnce(name, dataDir, ownsDir, opts.extraArgs ?? []);
      } catch (err) {
        // Another process can take a port between our probe and etcd's bind; pick new ports and retry.
        if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err;
        await rm(join(dataDir, 'data'), { recursive: true, force: true });
      }
    }
  } catch (err) {
    if (ownsDir) await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}

class PortTakenError extends EtcdStartError {}

/** One process 'exit' listener for all instances, so many etcds do not trip the max-listeners warning. */
const exitCleanups = new Set<() => void>();
// A test runner or CLI that exits without calling stop() must not leave etcd or its tmpfs data behind.
process.on('exit', () => {
  for (const cleanup of exitCleanups) cleanup();
});

async function startOnce(name: string, dataDir: string, ownsDir: boolean, extraArgs: string[]): Promise<RunningEtcd> {
  const [clientPort, peerPort] = await freePorts(2);
  const clientUrl = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const args = [
    `--name=${name}`,
    `--data-dir=${join(dataDir, 'data')}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=${name}=${peerUrl}`,
    '--initial-cluster-state=new',
    // A single member elects itself after one election timeout; the 1 s default is pure startup delay.
    '--heartbeat-interval=25',
    '--election-timeout=250',
    // Structured JSON lines on stderr, which the startup error reports quote.
    '--logger=zap',
    '--log-outputs=stderr',
    ...flagArgs(etcdFlags.product),
    ...extraArgs,
  ];
  const logFile = join(dataDir, LOG_FILE);
  const logFd = openSync(logFile, 'a');
  const logStart = fstatSync(logFd).size; // a retry appends; report only this attempt's words
  let child: ChildProcess;
  try {
    child = spawnEtcd(args, logFd);
  } finally {
    closeSync(logFd); // the child holds its own copy
  }
  // etcd alone must not keep this process alive; the exit hook below takes it down with us.
  child.unref();
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (err) => resolve(err.message));
  });

  let stopped: Promise<void> | undefined;
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
  };
  exitCleanups.add(killNow);
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      exitCleanups.delete(killNow);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      if (ownsDir) await rm(dataDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const polling = new AbortController();
  let outcome: 'healthy' | { exited: string } | { unhealthy: Error };
  try {
    outcome = await Promise.race([
      waitHealthy(clientUrl, polling.signal).then(() => 'healthy' as const),
      exited.then((how) => ({ exited: how })),
    ]);
  } catch (err) {
    outcome = { unhealthy: err as Error };
  } finally {
    polling.abort();
  }
  if (outcome !== 'healthy') {
    // Leave the data dir to the caller: a retry reuses it.
    exitCleanups.delete(killNow);
    child.kill('SIGKILL');
    await exited;
    if ('unhealthy' in outcome) throw outcome.unhealthy;
    const said = startupErrorLines(logFile, logStart);
    const message = `etcd exited during startup (${outcome.exited}); etcd said:\n${said}`;
    if (/address already in use/.test(said)) throw new PortTakenError(message);
    throw new EtcdStartError(message);
  }
  return { endpoint: clientUrl, clientPort, pid: child.pid!, dataDir, logFile, exited, stop };
}

function spawnEtcd(args: string[], logFd: number): ChildProcess {
  // Its own process group: Ctrl-C in a terminal signals the whole foreground group, and an etcd that quit
  // on it would fail its owner's orderly stop (in-flight requests, a final drain). The owner ends it.
  const options = { stdio: ['ignore', logFd, logFd] as ['ignore', number, number], detached: true };
  // With setpriv, etcd gets SIGKILL if this process dies without running its exit handlers (e.g. a killed
  // test worker); the tmpfs dir left behind is swept by the next startEtcd.
  if (canUsePdeathsig()) return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', ETCD_BINARY, ...args], options);
  return spawn(ETCD_BINARY, args, options);
}

let pdeathsigSupported: boolean | undefined;
function canUsePdeathsig(): boolean {
  if (pdeathsigSupported === undefined) {
    try {
      pdeathsigSupported = readFileSync(SETPRIV).includes('pdeathsig');
    } catch {
      pdeathsigSupported = false;
    }
  }
  return pdeathsigSupported;
}

async function assertEtcdInstalled(): Promise<void> {
  try {
    await access(ETCD_BINARY, fsConstants.X_OK);
  } catch {
    throw new EtcdStartError(
      `${ETCD_BINARY} not found or not executable: etcd is built from the pinned Go module tools/etcd; run \`npm run kube-bins\` (or set ETCD to an etcd ≥ 3.5.13)`,
    );
  }
}

async function waitHealthy(clientUrl: string, cancelled: AbortSignal): Promise<void> {
  const deadline = Date.now() + HEALTH_DEADLINE_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline && !cancelled.aborted) {
    try {
      const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: string };
      if (res.ok && body.health === 'true') return;
      last = `HTTP ${res.status} ${JSON.stringify(body)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new EtcdStartError(`etcd at ${clientUrl} not healthy after ${HEALTH_DEADLINE_MS} ms (${last})`);
}

/** What to show when etcd dies at startup: its error lines (a bad flag is followed by the whole usage text). */
function startupErrorLines(file: string, from: number): string {
  let lines: string[];
  try {
    lines = readFileSync(file).subarray(from).toString('utf8').trimEnd().split('\n');
  } catch {
    return '(no log)';
  }
  const errors = lines.filter((l) => /"level":"(?:error|fatal|panic)"|^(?:invalid|error)/i.test(l));
  return (errors.length > 0 ? errors.slice(-5) : lines.slice(-15)).join('\n');
}

/** Removes data dirs left in /dev/shm by owners that died without cleaning up (tmpfs is memory). */
async function sweepOrphans(): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(SHM_ROOT);
  } catch {
    return;
  }
  for (const entry of entries) {
    const match = entry.startsWith(DIR_PREFIX) ? /^(\d+)-/.exec(entry.slice(DIR_PREFIX.length)) : null;
    if (!match || isAlive(Number(match[1]))) continue;
    await rm(join(SHM_ROOT, entry), { recursive: true, force: true });
  }
}

/** Whether a process with this pid exists (one of another user's counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
