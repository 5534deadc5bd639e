/**
 * Heap settings of the local stack's worker threads (cluster threads and function threads).
 *
 * Why a larger young generation: an API server, a forwarder and a kubelet allocate a short-lived JSON tree for
 * every request, watch event and notice, and with V8's default young generation the collector took 4.8 of
 * a busy cluster thread's ~36 CPU seconds. At 96–192 MB the 20 × 50 fleet converged from empty in
 * 32.3–32.9 s against 36.9 s with the default, using 63–64 CPU seconds against 72 (`npm run bench -- fleet`,
 * docs/decisions/0029-local-fleet-clients-and-heaps.md). It costs memory only while a thread is busy: the
 * young generation grows toward its maximum under load and is at most this much per thread.
 */
import type { ResourceLimits } from 'node:worker_threads';

export const LOCAL_WORKER_RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 128 };
