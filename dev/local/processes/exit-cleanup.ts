/**
 * Last-resort cleanup of what process-mode pods leave on the machine (etcd processes, tmpfs data dirs, the
 * work dirs that hold the agent's kubeconfig) when the owner never calls stop(): on process exit, and on
 * SIGINT/SIGTERM. Cleanups run synchronously (an exiting process runs no more async work).
 *
 * Signals: a listener on SIGINT/SIGTERM replaces Node's default "terminate", so when ours is the only
 * listener we clean up and re-raise the signal to terminate as Node would have. When the host program has
 * its own listener (`spiritctl local up` stops the fleet gracefully), it owns the shutdown; the exit hook
 * still runs when it finally exits.
 */
const cleanups = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Best effort: one failed cleanup must not keep the others from running.
    }
  }
}

function onSignal(signal: 'SIGINT' | 'SIGTERM'): void {
  const others = process.listeners(signal).filter((l) => l !== signalListeners[signal]);
  if (others.length > 0) return;
  runAll();
  process.off(signal, signalListeners[signal]);
  process.kill(process.pid, signal);
}

const signalListeners = {
  SIGINT: () => onSignal('SIGINT'),
  SIGTERM: () => onSignal('SIGTERM'),
} as const;

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runAll);
  // First in line: a `once` listener of the host program removes itself before it runs, so a listener that
  // ran after it would wrongly see itself alone and cut the host's graceful shutdown short.
  process.prependListener('SIGINT', signalListeners.SIGINT);
  process.prependListener('SIGTERM', signalListeners.SIGTERM);
}

/** Registers a synchronous cleanup; returns the function that unregisters it (call it after a normal stop). */
export function cleanupOnExit(cleanup: () => void): () => void {
  install();
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
  };
}
