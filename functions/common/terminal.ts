/**
 * Which thrown errors mean "this input can never succeed" (core/outcome.ts), and the reason each carries.
 * Everything not named here stays on the retry path.
 */

import { ClusterAccessError } from '../../adapters/cluster-access/index.ts';
import { NodePoolNotServedError } from '../../adapters/kubernetes/client.ts';
import { sanitizeErrorMessage } from '../../adapters/state-table/index.ts';
import type { TerminalReason } from '../../core/outcome.ts';
import { TerminalError } from '../../core/outcome.ts';
import { EventValidationError } from '../../events/envelope.ts';

export type { TerminalKind, TerminalReason } from '../../core/outcome.ts';
export { TerminalError } from '../../core/outcome.ts';

/** What a handler returns for an input it recorded as a dead letter instead of failing on. */
export interface TerminalResult {
  result: 'terminal';
  terminal: TerminalReason;
}

export function terminalReasonOf(err: unknown): TerminalReason | undefined {
  if (err instanceof TerminalError) return err.reason;
  if (err instanceof EventValidationError) {
    const [first] = err.issues;
    return {
      kind: first?.path === 'detail-type' ? 'unknown-detail-type' : 'invalid-event',
      ...(first ? { field: first.path } : {}),
      message: sanitizeErrorMessage(err.issues.map((i) => `${i.path}: ${i.message}`).join('; '), 1000),
    };
  }
  // A cluster nobody registered stays unregistered for this event: registering it later is a new event.
  if (err instanceof ClusterAccessError && err.reason === 'not-registered') {
    return { kind: 'unknown-cluster', field: 'detail.clusterId', message: err.message };
  }
  // The access policy refuses the registration's access on every load alike: only an operator changing the
  // registration (or the kubeconfig it names) can help, and that is replayed from the dead-letter queue.
  if (err instanceof ClusterAccessError && err.rule !== undefined) {
    return { kind: 'access-refused', ...(err.field ? { field: err.field } : {}), message: err.message };
  }
  // What the cluster serves of NodePool stays as it is for this event: a change of its CRDs is a new one.
  if (err instanceof NodePoolNotServedError) return { kind: 'unsupported-cluster', message: err.message };
  return undefined;
}

export function unknownCluster(clusterId: string, field: string): TerminalError {
  return new TerminalError({
    kind: 'unknown-cluster',
    field,
    message: `cluster ${clusterId.slice(0, 253)} is not registered (see spiritctl clusters list)`,
  });
}
