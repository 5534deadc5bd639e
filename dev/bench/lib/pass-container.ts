/**
 * One warm Lambda execution environment for dev/bench/warm-pass.ts: a process of its own that imports a
 * packaged reconcile bundle (as Lambda's runtime does, with the function's NODE_OPTIONS and environment) and
 * calls its `handler` when the parent asks, measuring this process's CPU time (user + system, every thread)
 * around each call. Nothing else of the project is loaded here, so what is measured is the bundle's.
 *
 * Run as `node pass-container.ts <bundle.mjs>` with an IPC channel (child_process.fork); every answer names
 * the request it answers.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';

export type ContainerRequest =
  | { id: number; kind: 'invoke'; event: unknown; requestId: string }
  | { id: number; kind: 'anchor' }
  | { id: number; kind: 'profile-start' }
  | { id: number; kind: 'profile-stop'; file: string };

export interface InvokeAnswer {
  /** CPU time of this process during the handler call, in microseconds. */
  userUs: number;
  systemUs: number;
  /** The main thread's share of it (the rest: V8's compiler and collector threads, libuv's pool). */
  mainThreadUs: number;
  wallMs: number;
  /** What the handler returned (its ReconcileResult), or why it threw. */
  result?: { result?: string; clusterWrites?: number; passes?: number; applied?: string[] };
  error?: string;
}

export type ContainerAnswer = { id: number } & (
  | ({ kind: 'invoke' } & InvokeAnswer)
  | { kind: 'anchor'; userUs: number; systemUs: number }
  | { kind: 'profile-start' | 'profile-stop' | 'ready' }
  | { kind: 'failed'; error: string }
);

type Handler = (event: unknown, context: unknown) => Promise<InvokeAnswer['result']>;

/** What Lambda hands a handler, with 60 s left (the function's timeout). */
function lambdaContext(awsRequestId: string) {
  const deadline = Date.now() + 60_000;
  return {
    awsRequestId,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'reconcile',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:reconcile',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '512',
    logGroupName: '/aws/lambda/reconcile',
    logStreamName: 'bench',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

/**
 * A fixed piece of JavaScript work (JSON out and back of a ~20 KB object, as a pass handles apiserver
 * answers): the same in every container and revision, so it shows how fast the host ran at that moment.
 */
const ANCHOR_OBJECT = {
  items: Array.from({ length: 60 }, (_, i) => ({
    metadata: { name: `object-${i}`, labels: { a: 'b', pool: `p-${i}` }, annotations: { note: 'x'.repeat(64) } },
    spec: { replicas: i, containers: [{ name: 'c', image: 'registry/image:1.0', args: ['--a', '--b', `--n=${i}`] }] },
  })),
};
function anchorWork(): void {
  let n = 0;
  for (let i = 0; i < 40; i++) n += (JSON.parse(JSON.stringify(ANCHOR_OBJECT)) as typeof ANCHOR_OBJECT).items.length;
  if (n !== 2400) throw new Error('anchor: unexpected result');
}

async function main(bundle: string): Promise<void> {
  const mod = (await import(pathToFileURL(bundle).href)) as { handler?: Handler };
  const handler = mod.handler;
  if (typeof handler !== 'function') throw new Error(`${bundle} exports no handler`);
  let session: Session | undefined;

  const answer = (a: ContainerAnswer) => process.send?.(a);
  const handle = async (req: ContainerRequest): Promise<ContainerAnswer> => {
    switch (req.kind) {
      case 'invoke': {
        const context = lambdaContext(req.requestId);
        const cpu0 = process.cpuUsage();
        const main0 = process.threadCpuUsage();
        const t0 = performance.now();
        let result: InvokeAnswer['result'];
        let error: string | undefined;
        try {
          result = await handler(req.event, context);
        } catch (err) {
          error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        }
        const wallMs = performance.now() - t0;
        const main = process.threadCpuUsage(main0);
        const cpu = process.cpuUsage(cpu0);
        return {
          id: req.id,
          kind: 'invoke',
          userUs: cpu.user,
          systemUs: cpu.system,
          mainThreadUs: main.user + main.system,
          wallMs,
          result,
          error,
        };
      }
      case 'anchor': {
        const cpu0 = process.cpuUsage();
        anchorWork();
        const cpu = process.cpuUsage(cpu0);
        return { id: req.id, kind: 'anchor', userUs: cpu.user, systemUs: cpu.system };
      }
      case 'profile-start':
        session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        // 100 µs between samples: a pass is a few milliseconds.
        await session.post('Profiler.setSamplingInterval', { interval: 100 });
        await session.post('Profiler.start');
        return { id: req.id, kind: 'profile-start' };
      case 'profile-stop': {
        if (!session) throw new Error('profile-stop: no profile started');
        const { profile } = await session.post('Profiler.stop');
        session.disconnect();
        session = undefined;
        await writeFile(req.file, JSON.stringify(profile));
        return { id: req.id, kind: 'profile-stop' };
      }
    }
  };
  process.on('message', (req: ContainerRequest) => {
    handle(req).then(answer, (err: unknown) =>
      answer({ id: req.id, kind: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    );
  });
  answer({ id: 0, kind: 'ready' });
}

const [bundle] = process.argv.slice(2);
if (!bundle) {
  process.stderr.write('usage: node pass-container.ts <bundle.mjs> (forked by dev/bench/warm-pass.ts)\n');
  process.exit(2);
}
main(bundle).catch((err: unknown) => {
  process.stderr.write(`pass container: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
