/**
 * The files the agent authenticates with: its kubeconfig and its etcd client certificate, key and CA. The
 * reconciler renews leaf certificates without rolling the pod (a restart would empty the in-memory etcd);
 * the kubelet rewrites the Secret volume, and the agent's clients still hold what they read at start. So the
 * agent watches the content and restarts itself in place when it changes, without the container back-off.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AgentOptions } from './options.ts';

export function credentialFilesOf(options: Pick<AgentOptions, 'kubeconfig' | 'etcd'>): string[] {
  const etcd = options.etcd;
  const files = [options.kubeconfig, etcd?.caFile, etcd?.certFile, etcd?.keyFile];
  return files.filter((f): f is string => typeof f === 'string' && f.length > 0);
}

export class CredentialFiles {
  private readonly paths: readonly string[];
  private seen: string;

  constructor(paths: readonly string[]) {
    this.paths = paths;
    this.seen = this.fingerprint() ?? '';
  }

  /**
   * True once when the content differs from what was seen last. A file that cannot be read is not a change:
   * the kubelet swaps a Secret volume's files in one rename, but a reader can still catch a missing file.
   */
  changed(): boolean {
    const now = this.fingerprint();
    if (now === undefined || now === this.seen) return false;
    this.seen = now;
    return true;
  }

  private fingerprint(): string | undefined {
    const hash = createHash('sha256');
    try {
      for (const p of this.paths) hash.update(p).update('\0').update(readFileSync(p)).update('\0');
    } catch {
      return undefined;
    }
    return hash.digest('hex');
  }
}

/** Resolves on the first change seen, polling every `everyMs`; never, once `signal` aborts. */
export function nextCredentialChange(files: CredentialFiles, everyMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!files.changed()) return;
      clearInterval(timer);
      resolve();
    }, everyMs);
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  });
}
