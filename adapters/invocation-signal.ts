/**
 * The running invocation's deadline, as an AbortSignal the adapters' I/O obeys. A Lambda invocation that
 * overruns its budget must stop writing: middy ends the invocation a little before the platform's timeout
 * (functions/common/observed-handler.ts) and then the execution environment is frozen, not killed, so a pass
 * still awaiting a slow read would go on writing when the sandbox is thawed for a later invocation — after
 * the lease that guarded it may have passed to another holder (docs/decisions/0012; this signal is
 * docs/decisions/0044). The signal is carried by the invocation's async context, so the state table and the
 * Kubernetes client see it without every call in between passing it on; outside an invocation (the CLI, tests
 * calling adapters directly) there is none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` as an invocation whose I/O stops when `signal` fires. */
export function withInvocationSignal<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  return signal ? scope.run(signal, fn) : fn();
}

/**
 * The current invocation's signal, after checking it: once it fired, no request may start (throws the
 * abort reason), and a request started with it is aborted when it fires.
 */
export function invocationSignal(): AbortSignal | undefined {
  const signal = scope.getStore();
  signal?.throwIfAborted();
  return signal;
}
