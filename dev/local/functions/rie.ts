/**
 * One execution environment of a function run the way Lambda runs it, by AWS's own code: the zip `npm run
 * package` wrote, unpacked as the task root, under the Runtime Interface Emulator (aws-lambda-rie) with the
 * Node.js runtime interface client (aws-lambda-ric) on the project's Node 22 as its runtime process — both from
 * scripts/lambda-rie.sh. Used by the tests (test/e2e/aws) and by `spiritctl local up --lambda rie`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');
export const RIE_DIR = join(ROOT, '.cache', 'lambda-rie');
export const RIE_BIN = join(RIE_DIR, 'bin', 'aws-lambda-rie');
export const RIC_ENTRY = join(RIE_DIR, 'ric', 'node_modules', 'aws-lambda-ric', 'index.mjs');
export const NODE_22 = join(ROOT, 'node_modules', '.bin', 'node');

/** Polls until `check` is true (its errors are final), or fails after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function rieMissing(): string | undefined {
  for (const f of [RIE_BIN, RIC_ENTRY]) if (!existsSync(f)) return `${f} is missing: run scripts/lambda-rie.sh`;
  return undefined;
}

export interface RieFunctionOptions {
  zipPath: string;
  /** The template's handler string, e.g. functions/reconcile/handler.handler. */
  handler: string;
  functionName: string;
  timeoutSeconds: number;
  memorySizeMb: number;
  /** The function's environment (the template's, resolved), besides what the runtime sets. */
  environment: Record<string, string>;
}

export interface InvokeResult {
  status: number;
  body: unknown;
  /** Epoch ms the invoke was sent and answered. */
  sentAt: number;
  answeredAt: number;
}

export interface RieFunction {
  /** `requestId` becomes the invocation's request id (the emulator takes it from X-Amzn-RequestId). */
  invoke(event: unknown, requestId?: string): Promise<InvokeResult>;
  /** Everything the emulator and the function wrote (stdout and stderr, interleaved as received). */
  logs(): string;
  /** Each init phase's duration (ms), one per cold start. */
  initDurations(): number[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRieFunction(opts: RieFunctionOptions): Promise<RieFunction> {
  const taskRoot = await mkdtemp(join(tmpdir(), `rie-${opts.functionName}-`));
  await run('unzip', ['-q', opts.zipPath, '-d', taskRoot]);
  const [invokePort, runtimeApiPort] = [await freePort(), await freePort()];
  // The emulator hands its whole environment to the function: it gets only what Lambda would set.
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    LAMBDA_TASK_ROOT: taskRoot,
    LAMBDA_RUNTIME_DIR: join(RIE_DIR, 'ric'),
    _HANDLER: opts.handler,
    AWS_LAMBDA_FUNCTION_NAME: opts.functionName,
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(opts.timeoutSeconds),
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(opts.memorySizeMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${opts.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: 'rie',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    ...opts.environment,
  };
  let output = '';
  const child: ChildProcess = spawn(
    RIE_BIN,
    [
      '--runtime-interface-emulator-address',
      `127.0.0.1:${invokePort}`,
      '--runtime-api-address',
      `127.0.0.1:${runtimeApiPort}`,
      NODE_22,
      RIC_ENTRY,
    ],
    // Its own process group: stopping it stops the runtime process it started too.
    { cwd: taskRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const url = `http://127.0.0.1:${invokePort}/2015-03-31/functions/function/invocations`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`aws-lambda-rie exited: ${output.slice(-2000)}`);
      return fetch(`http://127.0.0.1:${invokePort}/`).then(
        () => true,
        () => false,
      );
    },
    10_000,
    `aws-lambda-rie for ${opts.functionName} to listen`,
  );
  return {
    async invoke(event, requestId) {
      const sentAt = Date.now();
      const headers: Record<string, string> = requestId ? { 'X-Amzn-RequestId': requestId } : {};
      const res = await fetch(url, { method: 'POST', body: JSON.stringify(event), headers });
      const text = await res.text();
      const answeredAt = Date.now();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // The emulator's own answers (a timeout) are plain text.
      }
      return { status: res.status, body, sentAt, answeredAt };
    },
    logs: () => output,
    // The init phase as the emulator's runtime core measured it (its REPORT line's "Init Duration" only times
    // the hand-off, the init itself runs asynchronously).
    initDurations: () => [...output.matchAll(/INIT REPORT\(durationMs: ([\d.]+)\)/g)].map((m) => Number(m[1])),
    async stop() {
      if (child.exitCode === null && child.pid) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(-child.pid, 'SIGKILL');
        await exited;
      }
      await rm(taskRoot, { recursive: true, force: true });
    },
  };
}
