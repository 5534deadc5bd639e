/**
 * A worker thread hosting execution environments of one function. Each container id gets its own
 * handler instance (as each Lambda sandbox has its own module state); invocations arrive as messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { withInvocationSignal } from '../../../adapters/invocation-signal.ts';
import type { Handler } from '../lambda-runtime.ts';
import { CONTAINER_FACTORIES, type ContainerKind, type ContainerSettings } from './containers.ts';
import type { InvokeMessage, ResultMessage } from './worker-protocol.ts';

const { kind, settings } = workerData as { kind: ContainerKind; settings: ContainerSettings };
const containers = new Map<number, Handler>();

parentPort!.on('message', (msg: InvokeMessage) => {
  let handler = containers.get(msg.container);
  if (!handler) {
    handler = CONTAINER_FACTORIES[kind](settings);
    containers.set(msg.container, handler);
  }
  const context: Context = {
    ...msg.context,
    getRemainingTimeInMillis: () => Math.max(0, msg.deadline - Date.now()),
    // The deprecated callback-style completions: the handlers here return promises and never call them.
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  // The deadline stops the pass's I/O here, in its own thread, as the main-thread runtime does
  // (dev/local/lambda-runtime.ts): the host gives up on the invocation at the same moment.
  const deadlineReached = new AbortController();
  const timer = setTimeout(
    () => deadlineReached.abort(new Error('the invocation passed its deadline')),
    Math.max(0, msg.deadline - Date.now()),
  );
  withInvocationSignal(deadlineReached.signal, () => handler(msg.event, context))
    .finally(() => clearTimeout(timer))
    .then(
      (result) => parentPort!.postMessage({ id: msg.id, ok: true, result } satisfies ResultMessage),
      (err: unknown) =>
        parentPort!.postMessage({
          id: msg.id,
          ok: false,
          error: {
            name: (err as Error)?.name ?? 'Error',
            message: (err as Error)?.message ?? String(err),
            ...requeueAfter(err),
          },
        } satisfies ResultMessage),
    );
});

function requeueAfter(err: unknown): { afterMs?: number } {
  const afterMs = (err as { afterMs?: unknown } | null)?.afterMs;
  return typeof afterMs === 'number' ? { afterMs } : {};
}
