import type { KubeObject } from '../kube.ts';
import { NODE_POOL_LABEL } from '../nodepool.ts';
import { describeObject } from './text.ts';
import type { Finding } from './types.ts';

/**
 * A pool-spirit pod must run on a node of its own pool: that is the pool its YurtHubs can reach while the
 * cloud link is down. The Deployment's required node affinity only applies at scheduling time
 * (IgnoredDuringExecution), so a node relabelled into another pool, or a hand-edited affinity, leaves the
 * pod outside. `fixable` when the Deployment itself drifted (the reconcile restores the affinity and that
 * rolls the pod); otherwise the pod has to be deleted so it is rescheduled.
 */
export function placementFindings(
  cluster: string,
  pool: string,
  pods: KubeObject[],
  nodesByName: ReadonlyMap<string, KubeObject>,
  deploymentDrifted: boolean,
): Finding[] {
  const findings: Finding[] = [];
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) continue;
    const node = nodesByName.get(nodeName);
    const nodePool = node?.metadata.labels?.[NODE_POOL_LABEL];
    if (node && nodePool === pool) continue;
    const where = !node
      ? `node ${nodeName}, which no longer exists`
      : nodePool
        ? `node ${nodeName} of pool ${nodePool}`
        : `node ${nodeName}, which is in no pool`;
    findings.push({
      severity: 'critical',
      kind: 'misplaced',
      cluster,
      pool,
      object: describeObject(pod),
      fixable: deploymentDrifted,
      reason: `pool-spirit pod ${pod.metadata.name} runs on ${where}, outside pool ${pool}${deploymentDrifted ? '; a reconcile restores the node affinity and moves it' : '; delete the pod so it is rescheduled inside the pool'}`,
    });
  }
  return findings;
}
