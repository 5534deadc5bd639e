/**
 * The one way this project opens an etcd3 client, so every user gets the same two fixes to its defaults.
 */
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';

/** grpc-js refuses messages over 4 MiB by default; a list or a watch catch-up batch of 8 KB objects exceeds it. */
const MAX_MESSAGE_BYTES = 512 * 1024 * 1024;

/**
 * etcd3's default fault handling retries every "recoverable" error three times and opens a per-host circuit
 * breaker for 5 s after three of them. etcd's NOSPACE answer counts as recoverable, so one refused write
 * was retried (writes are not idempotent) and then blocked even the reads and deletes that would free space.
 * Errors go straight to the caller instead; kube clients retry on their own terms.
 */
export function createEtcdClient(endpoints: readonly string[], what = 'etcd endpoints'): Etcd3 {
  if (
    !Array.isArray(endpoints) ||
    endpoints.length === 0 ||
    endpoints.some((e) => typeof e !== 'string' || !/^https?:\/\/[^/]+/.test(e))
  ) {
    throw new TypeError(`${what} must be a non-empty list of http(s) URLs; got ${JSON.stringify(endpoints)}`);
  }
  return new Etcd3({
    hosts: [...endpoints],
    grpcOptions: {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    },
    faultHandling: { host: () => noop, global: noop },
  });
}

/** etcd's words for a read at, or a compaction to, a revision that is already compacted. */
export function isCompactedError(err: unknown): boolean {
  return err instanceof Error && err.message.includes('required revision has been compacted');
}
