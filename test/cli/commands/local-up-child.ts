/** `spiritctl local up --json` as a child process, as a user runs it: its JSON lines, its exit, kill -9. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from '../../support/wait.ts';

export const ROOT = resolve(import.meta.dirname, '../../..');

export interface OutputLine {
  type: string;
  message?: string;
  converged?: boolean;
  /** When this process read it. */
  at: number;
  [k: string]: unknown;
}

export interface LocalUpChild {
  child: ChildProcess;
  lines: OutputLine[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line (from index `from`) that `match` accepts. */
  waitForLine(match: (l: OutputLine) => boolean, timeoutMs: number, what: string, from?: number): Promise<OutputLine>;
  kill9(): Promise<void>;
}

export function startLocalUp(args: string[], env: NodeJS.ProcessEnv = {}): LocalUpChild {
  const child = spawn(process.execPath, ['cli/main.ts', 'local', 'up', '--json', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: OutputLine[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push({ ...JSON.parse(text), at: Date.now() });
    } catch {
      lines.push({ type: 'text', message: text, at: Date.now() });
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    async waitForLine(match, timeoutMs, what, from = 0) {
      return waitFor(
        () => {
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(`local up exited (${child.exitCode ?? child.signalCode}); stderr: ${stderr.slice(-2000)}`);
          return lines.slice(from).find(match);
        },
        timeoutMs,
        what,
        50,
      );
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export const isConverged = (l: OutputLine) => l.type === 'log' && /^converged: /.test(l.message ?? '');

/** The variables `<state-dir>/env` exports, as `source` would set them. */
export function readStackEnv(envFile: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^export ([A-Z_]+)='(.*)'$/.exec(line);
    if (m) vars[m[1]] = m[2].replace(/'\\''/g, "'");
  }
  return vars;
}
