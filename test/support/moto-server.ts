/**
 * moto's server (AWS's APIs emulated by the moto project, from the venv `bash scripts/python-judges.sh`
 * installs) on a loopback port, started the way the tests start etcd: its own process group, killed with the
 * test process (pdeathsig where setpriv can, an exit hook otherwise), and ended as a group on stop. One
 * server per test file: its state is in memory and lives as long as the process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupOnExit } from '../../dev/local/processes/exit-cleanup.ts';
import { freePorts } from '../../dev/local/processes/free-ports.ts';
import { ROOT } from '../../scripts/bundle-functions.ts';
import { waitFor } from './wait.ts';

/** The venv of the Python judges (cfn-lint, moto), git-ignored. */
export const PY_JUDGES_BIN = join(ROOT, '.cache', 'py-judges', 'bin');
export const MOTO_SERVER = join(PY_JUDGES_BIN, 'moto_server');
const SETPRIV = '/usr/bin/setpriv';
/** moto imports its service modules at start: seconds on a busy two-core machine. */
const START_DEADLINE_MS = 60_000;
const STOP_GRACE_MS = 3_000;
const PORT_ATTEMPTS = 5;

/** Credentials moto accepts (it checks none); the account it serves is its default, 123456789012. */
export const MOTO_CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };
export const MOTO_ACCOUNT_ID = '123456789012';

export interface MotoServer {
  /** e.g. `http://127.0.0.1:40123`: the endpoint of every AWS client pointed at it. */
  endpoint: string;
  pid: number;
  /** The server's last lines of output (its request log and any traceback). */
  lastLines(count?: number): string;
  /** Ends the server's process group; safe to call more than once. */
  stop(): Promise<void>;
}

/** Names what is missing and how to install it, when the venv is not there. */
export function assertPythonJudges(binary: string): void {
  if (!existsSync(binary))
    throw new Error(
      `${binary} is missing: install the Python judges (cfn-lint, moto) with \`bash scripts/python-judges.sh\` ` +
        '(npm test runs it through scripts/ensure-env.sh --tests)',
    );
}

export async function startMotoServer(): Promise<MotoServer> {
  assertPythonJudges(MOTO_SERVER);
  const logDir = await mkdtemp(join(tmpdir(), 'moto-'));
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnce(logDir);
      } catch (err) {
        // Another process can take the port between our probe and moto's bind: new port, new try.
        if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err;
      }
    }
  } catch (err) {
    await rm(logDir, { recursive: true, force: true });
    throw err;
  }
}

class PortTakenError extends Error {}

async function startOnce(logDir: string): Promise<MotoServer> {
  const [port] = await freePorts(1);
  const endpoint = `http://127.0.0.1:${port}`;
  const logFile = join(logDir, `moto-${port}.log`);
  const tail = (count = 20) => lastLines(logFile, count);
  const child = spawnMoto(['-H', '127.0.0.1', '-p', String(port)], logFile);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (err) => resolve(err.message));
  });
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // The group is already gone.
    }
  };
  const forget = cleanupOnExit(() => killGroup('SIGKILL'));
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      forget();
      if (child.exitCode === null && child.signalCode === null) {
        killGroup('SIGTERM');
        const timer = setTimeout(() => killGroup('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      await rm(logDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  let spawnFailed = false;
  child.once('error', () => {
    spawnFailed = true;
  });
  const outcome = await waitFor(
    async () => {
      if (spawnFailed || child.exitCode !== null || child.signalCode !== null) return 'exited' as const;
      const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2_000) });
      return res.ok ? ('answering' as const) : false;
    },
    START_DEADLINE_MS,
    `moto_server at ${endpoint} to answer`,
    100,
  ).catch((err: Error) => err);
  if (outcome !== 'answering') {
    forget();
    killGroup('SIGKILL');
    const how = outcome === 'exited' ? `exited during start-up (${await exited})` : outcome.message;
    await exited;
    const said = tail();
    if (outcome === 'exited' && /Address already in use/i.test(said)) throw new PortTakenError(said);
    throw new Error(`moto_server ${how}; it said:\n${said}`);
  }
  return { endpoint, pid: child.pid!, lastLines: tail, stop };
}

function spawnMoto(args: string[], logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  try {
    // Its own process group, so stop() ends whatever it started; with setpriv, the kernel kills it if this
    // process dies without running its exit hooks (a killed test worker).
    const options = { stdio: ['ignore', fd, fd] as ['ignore', number, number], detached: true };
    const child = canUsePdeathsig()
      ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', MOTO_SERVER, ...args], options)
      : spawn(MOTO_SERVER, args, options);
    // The server alone must not keep the test process alive.
    child.unref();
    return child;
  } finally {
    closeSync(fd); // the child holds its own copy
  }
}

let pdeathsigSupported: boolean | undefined;
function canUsePdeathsig(): boolean {
  pdeathsigSupported ??= existsSync(SETPRIV) && readFileSync(SETPRIV).includes('pdeathsig');
  return pdeathsigSupported;
}

function lastLines(file: string, count: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no output)';
  }
}
