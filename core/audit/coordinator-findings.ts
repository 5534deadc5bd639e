import type { KubeObject } from '../kube.ts';
// The two modules, not the yurt-coordinator index: the audit's index is imported by functions (cloud events)
// that must not bundle the coordinator's rendering and its PKI issuer.
import { CERTS_SECRET, COORDINATOR_NAMESPACE } from '../yurt-coordinator/contract.ts';
import { describeForeignWrites, foreignCertsWrites } from '../yurt-coordinator/foreign-writers.ts';
import { OWN_FIELD_MANAGERS } from './drift.ts';
import type { Finding } from './types.ts';

/**
 * Another writer of the keys the product renders into kube-system's yurt-coordinator certs Secret (in
 * practice yurt-manager's yurtcoordinatorcert controller, at its start): every compat pool's hubs starting
 * meanwhile get a CA that verifies no pool-spirit. A reconcile of the pool takes the keys back, so it is
 * fixable; the writer does it again at its next start unless it is turned off, which the reason says.
 */
export function coordinatorFindings(
  cluster: string,
  compatPools: readonly string[],
  certsSecret: KubeObject | undefined,
): Finding[] {
  if (!certsSecret || compatPools.length === 0) return [];
  const writes = foreignCertsWrites(certsSecret, OWN_FIELD_MANAGERS[0] ?? '');
  if (writes.length === 0) return [];
  const reason =
    `${COORDINATOR_NAMESPACE} ${CERTS_SECRET} was written by ${describeForeignWrites(writes)}: hubs of this pool ` +
    "starting now get a CA that verifies no pool-spirit. A reconcile takes the keys back; yurt-manager's " +
    'yurtcoordinatorcert controller rewrites them at every start unless it runs with ' +
    '--controllers=*,-yurtcoordinatorcert (docs/openyurt.md)';
  return compatPools.map((pool) => ({
    severity: 'critical',
    kind: 'foreign-writer',
    cluster,
    pool,
    reason,
    fixable: true,
    object: `Secret ${COORDINATOR_NAMESPACE}/${CERTS_SECRET}`,
  }));
}
