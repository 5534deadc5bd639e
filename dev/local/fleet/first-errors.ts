/** The API server's own words when a Kubernetes client error carries them, else the error's message. */
export function kubeErrorMessage(err: unknown): string {
  const e = err as { body?: { message?: unknown }; message?: unknown } | null;
  return String(e?.body?.message ?? e?.message ?? err);
}

/** Logs the first occurrences of each distinct error (the kubelet retries, so one fault repeats often). */
export function firstErrorsOnly(log: (line: string) => void, perMessage = 3) {
  const seen = new Map<string, number>();
  return {
    report(clusterId: string, err: Error) {
      const message = kubeErrorMessage(err);
      const n = (seen.get(message) ?? 0) + 1;
      seen.set(message, n);
      if (n <= perMessage)
        log(`${clusterId} kubelet: ${message}${n === perMessage ? ' (further repeats not shown)' : ''}`);
    },
  };
}
