/** Pure scheduling decisions of the local kubelet: which Ready node of a pod's pool can run it. */
type Obj = Record<string, any>;

export function nodeReady(node: Obj): boolean {
  return (node.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
}

function matchExpression(labels: Record<string, string>, expr: Obj): boolean {
  const value = labels[expr.key];
  const values: string[] = expr.values ?? [];
  switch (expr.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(values[0]);
    default:
      return false;
  }
}

function tolerates(tolerations: Obj[], taint: Obj): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

/** Why the pod cannot run on the node, or undefined when it can. */
export function unfitReason(pod: Obj, node: Obj): string | undefined {
  if (!nodeReady(node)) return 'node(s) were not ready';
  if (node.spec?.unschedulable) return 'node(s) were unschedulable';
  const labels: Record<string, string> = node.metadata?.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (labels[k] !== v) return "node(s) didn't match Pod's node affinity/selector";
  }
  const terms: Obj[] =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length && !terms.some((t) => (t.matchExpressions ?? []).every((e: Obj) => matchExpression(labels, e)))) {
    return "node(s) didn't match Pod's node affinity/selector";
  }
  const tolerations: Obj[] = pod.spec?.tolerations ?? [];
  for (const taint of node.spec?.taints ?? []) {
    if ((taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerates(tolerations, taint)) {
      return 'node(s) had untolerated taint(s)';
    }
  }
  return undefined;
}

export type Placement = { nodeName: string } | { reason: string };

/** Picks the fitting node with the fewest pods (name breaks ties), or explains like kube-scheduler. */
export function placePod(pod: Obj, nodes: Obj[], podsOnNode: (name: string) => number): Placement {
  const reasons = new Map<string, number>();
  const fitting: Obj[] = [];
  for (const node of nodes) {
    const reason = unfitReason(pod, node);
    if (reason) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    else fitting.push(node);
  }
  if (fitting.length === 0) {
    const detail = [...reasons].map(([r, n]) => `${n} ${r}`).join(', ');
    return { reason: `0/${nodes.length} nodes are available${detail ? `: ${detail}` : ''}.` };
  }
  fitting.sort(
    (a, b) =>
      podsOnNode(a.metadata.name) - podsOnNode(b.metadata.name) || a.metadata.name.localeCompare(b.metadata.name),
  );
  return { nodeName: fitting[0].metadata.name };
}

/**
 * Seconds a pod may stay on a node that is not ready or unreachable, from its tolerations, as the node
 * lifecycle controller reads them (no matching toleration: evicted at once; no tolerationSeconds: never).
 */
export function evictionGraceSeconds(pod: Obj, node: Obj | undefined): number | undefined {
  const taintKey = !node
    ? 'node.kubernetes.io/unreachable'
    : nodeReady(node)
      ? undefined
      : 'node.kubernetes.io/not-ready';
  if (!taintKey) return undefined;
  const match = (pod.spec?.tolerations ?? []).find(
    (t: Obj) => (t.effect === 'NoExecute' || !t.effect) && (t.key === taintKey || (t.operator === 'Exists' && !t.key)),
  );
  if (!match) return 0;
  return match.tolerationSeconds === undefined ? Infinity : Number(match.tolerationSeconds);
}
