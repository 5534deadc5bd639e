/**
 * `spiritctl local up --lambda rie`: the local stack's functions run from the zips `npm run package` writes,
 * under AWS's Runtime Interface Emulator and runtime interface client (./rie.ts), instead of in process. Each
 * container of a LocalFunction is one emulator process (the emulator runs one invocation at a time), started on
 * its first invocation, with the handler, memory, timeout and environment the packaged template gives the
 * function; the AWS SDK's own endpoint variables point it at the local table and bus.
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Handler } from '../lambda-runtime.ts';
import { type RieFunction, rieMissing, startRieFunction } from './rie.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..', '..');

interface TemplateFunction {
  Handler: string;
  MemorySize: number;
  Timeout: number;
  Environment: { Variables: Record<string, unknown> };
}

export interface RieFunctionsOptions {
  /** Where `npm run package` writes (replaced) or wrote. */
  packageDir: string;
  /** Package now (into `packageDir`), or run what is there. */
  packageAfresh: boolean;
  dynamoEndpoint: string;
  tableName: string;
  /** The local bus: EventBridge PutEvents and the SQS dead-letter queues. */
  busEndpoint: string;
  eventBusName: string;
  deadLetterQueueUrl(functionName: string): string | undefined;
}

export interface RieFunctions {
  packageDir: string;
  /** A new execution environment of `functionName`: its emulator starts on the first invocation. */
  newContainer(functionName: string): Handler;
  stop(): Promise<void>;
}

/** A host for the functions' emulators, over a fresh `npm run package` unless given one. */
export async function startRieFunctions(opts: RieFunctionsOptions): Promise<RieFunctions> {
  const missing = rieMissing();
  if (missing) throw new Error(`--lambda rie: ${missing}`);
  if (opts.packageAfresh) await packageFunctions(opts.packageDir);
  const template = JSON.parse(
    await readFile(join(opts.packageDir, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as { Resources: Record<string, { Properties: TemplateFunction }> };
  const running = new Set<RieFunction>();
  let stopped = false;

  function environmentOf(name: string, fn: TemplateFunction): Record<string, string> {
    const refs: Record<string, string | undefined> = {
      StateTable: opts.tableName,
      EventBus: opts.eventBusName,
      ClusterAccess: 'eks',
    };
    const env = Object.entries(fn.Environment.Variables).map(([key, value]) => {
      if (typeof value === 'string') return [key, value];
      const ref = (value as { Ref?: string }).Ref ?? '';
      const local = ref.endsWith('DeadLetterQueue') ? opts.deadLetterQueueUrl(name) : refs[ref];
      if (local === undefined) throw new Error(`${name}: Environment.Variables.${key}: no local value for ${ref}`);
      return [key, local];
    });
    return {
      ...Object.fromEntries(env),
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: opts.dynamoEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: opts.busEndpoint,
      AWS_ENDPOINT_URL_SQS: opts.busEndpoint,
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'ERROR',
    };
  }

  return {
    packageDir: opts.packageDir,
    newContainer(name) {
      const id = `${name[0].toUpperCase()}${name.slice(1)}LambdaFunction`;
      const fn = template.Resources[id]?.Properties;
      if (!fn) throw new Error(`${opts.packageDir}: the packaged template has no ${id}`);
      let emulator: Promise<RieFunction> | undefined;
      return async (event: unknown) => {
        if (stopped) throw new Error('the function emulators were stopped');
        emulator ??= startRieFunction({
          zipPath: join(opts.packageDir, `${name}.zip`),
          handler: fn.Handler,
          functionName: `pool-spirit-reconciler-local-${name}`,
          timeoutSeconds: fn.Timeout,
          memorySizeMb: fn.MemorySize,
          environment: environmentOf(name, fn),
        }).then((f) => {
          running.add(f);
          return f;
        });
        const result = await (await emulator).invoke(event);
        // The emulator's own answer when the platform timeout ended the invocation: plain text.
        if (typeof result.body === 'string' && result.body.startsWith('Task timed out'))
          throw Object.assign(new Error(result.body), { name: 'TimeoutError' });
        const error = result.body as { errorType?: unknown; errorMessage?: unknown } | null;
        if (typeof error?.errorType === 'string') {
          // AWS's error shape back into an Error: its type names it (RequeueError, TimeoutError, ...).
          throw Object.assign(new Error(String(error.errorMessage ?? '')), { name: error.errorType });
        }
        if (result.status !== 200)
          throw new Error(`${name}: the emulator answered ${result.status}: ${JSON.stringify(result.body)}`);
        return result.body;
      };
    },
    async stop() {
      stopped = true;
      await Promise.all([...running].map((f) => f.stop()));
      running.clear();
    },
  };
}

/** `npm run package` (osls, offline, stage dev) into `dir` (emptied first). */
export async function packageFunctions(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await run('bash', ['scripts/package.sh', '--package', dir], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      STAGE: 'dev',
    },
    maxBuffer: 16 * 1024 * 1024,
  });
}
