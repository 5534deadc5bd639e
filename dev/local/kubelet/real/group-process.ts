/**
 * A node's long-running binary (containerd, the kubelet, the Service relay) as the leader of its own process
 * group: stop() signals the whole group (the kubelet's mount helpers, containerd's children), SIGTERM then
 * SIGKILL, and this process's exit kills the group too (dev/local/processes/exit-cleanup.ts). `exited`
 * settles only for an exit nobody asked for.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { cleanupOnExit } from '../../processes/exit-cleanup.ts';
import { lastLines, type ProcessExit } from '../../processes/supervise.ts';

export interface GroupProcess {
  name: string;
  pid: number;
  logFile: string;
  exited: Promise<ProcessExit>;
  ended(): ProcessExit | undefined;
  lastLines(count?: number): string;
  stop(graceMs?: number): Promise<void>;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

export function spawnGroup(name: string, command: { file: string; args: string[] }, logFile: string): GroupProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(command.file, command.args, { stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  const pid = child.pid ?? -1;
  const forget = cleanupOnExit(() => killGroup(pid, 'SIGKILL'));
  let stopping = false;
  let end: ProcessExit | undefined;
  let report: (exit: ProcessExit) => void = () => undefined;
  const exited = new Promise<ProcessExit>((resolve) => (report = resolve));
  const gone = new Promise<void>((resolve) =>
    child.once('exit', (exitCode, signal) => {
      end = { name, exitCode, signal, lastLines: lastLines(logFile), at: new Date() };
      if (!stopping) report(end);
      resolve();
    }),
  );
  let stopped: Promise<void> | undefined;
  return {
    name,
    pid,
    logFile,
    exited,
    ended: () => end,
    lastLines: (count) => lastLines(logFile, count),
    stop: (graceMs = 10_000) =>
      (stopped ??= (async () => {
        stopping = true;
        if (!end) {
          killGroup(pid, 'SIGTERM');
          const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
          await gone;
          clearTimeout(timer);
        }
        // Whatever the leader left in its group.
        killGroup(pid, 'SIGKILL');
        forget();
      })()),
  };
}
