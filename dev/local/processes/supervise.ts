/**
 * Running a built Kubernetes binary as a supervised child: its output to a log file (whose last lines are
 * what a failure quotes), killed if this process exits first (exit-cleanup.ts), and an `exited` promise that
 * settles only for an exit nobody asked for — the crash an owner must react to.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { cleanupOnExit } from './exit-cleanup.ts';

const STOP_GRACE_MS = 5_000;
const POLL_MS = 200;

export interface ProcessExit {
  name: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The binary's last lines of output. */
  lastLines: string;
  at: Date;
}

export interface SupervisedProcess {
  name: string;
  pid: number;
  args: readonly string[];
  logFile: string;
  /** Settles when the process ends without stop() having been called. */
  exited: Promise<ProcessExit>;
  /** Whether the process has ended (asked to or not). */
  ended(): ProcessExit | undefined;
  lastLines(count?: number): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves when it is gone. */
  stop(): Promise<void>;
}

export function spawnSupervised(
  name: string,
  binary: string,
  args: readonly string[],
  logFile: string,
): SupervisedProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const forget = cleanupOnExit(() => child.kill('SIGKILL'));
  let stopping = false;
  let end: ProcessExit | undefined;
  let report: (exit: ProcessExit) => void = () => undefined;
  const exited = new Promise<ProcessExit>((resolve) => {
    report = resolve;
  });
  const tail = (count = 15) => lastLines(logFile, count);
  child.once('exit', (exitCode, signal) => {
    forget();
    end = { name, exitCode, signal, lastLines: tail(), at: new Date() };
    if (!stopping) report(end);
  });
  let stopped: Promise<void> | undefined;
  return {
    name,
    pid: child.pid ?? -1,
    args,
    logFile,
    exited,
    ended: () => end,
    lastLines: tail,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        await stopChild(child);
        forget();
      })()),
  };
}

/**
 * Polls `probe` until it answers 200. Throws `onExit(exit)` if the process ends first, and an error quoting
 * its output if the deadline passes.
 */
export async function waitUntilReady(
  proc: SupervisedProcess,
  probe: () => Promise<number>,
  deadline: number,
  onExit: (exit: ProcessExit) => Error,
): Promise<void> {
  let last = 'no answer';
  while (Date.now() < deadline) {
    const end = proc.ended();
    if (end) throw onExit(end);
    try {
      const status = await probe();
      if (status === 200) return;
      last = `HTTP ${status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`${proc.name} not ready in time: ${last}; it said:\n${proc.lastLines()}`);
}

export function lastLines(file: string, count = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no output)';
  }
}

/** The HTTP status of a GET; HTTPS verified against `tls.caPem`, presenting `tls.cert`/`tls.key` when given. */
export function httpStatus(url: string, tls: { caPem?: string; cert?: string; key?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    };
    const req = url.startsWith('https:')
      ? httpsRequest(url, { ca: tls.caPem, cert: tls.cert, key: tls.key, timeout: 2_000 }, onResponse)
      : httpRequest(url, { timeout: 2_000 }, onResponse);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}
