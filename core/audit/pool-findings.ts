import type { KubeObject } from '../kube.ts';
import { type FleetDefaults, type NodePool, poolSpiritIntent } from '../nodepool.ts';
import type { PoolSpiritStatus } from '../poolspirit/api.ts';
import { labelValue, POOL_LABEL } from '../render/labels.ts';
import { describeObject, duration } from './text.ts';
import type { AuditThresholds, Finding } from './types.ts';

/** The NodePool a PoolSpirit serves: spec.nodePool, else its own name (they are created with the same name). */
export function poolOfSpirit(spirit: KubeObject): string {
  const spec = spirit.spec as { nodePool?: unknown } | undefined;
  return typeof spec?.nodePool === 'string' && spec.nodePool ? spec.nodePool : spirit.metadata.name;
}

/** An edge pool (wanted) without its PoolSpirit: the reconcile creates it. */
export function missingPoolSpirit(
  cluster: string,
  nodePool: NodePool,
  spirit: KubeObject | undefined,
  defaults: FleetDefaults,
): Finding[] {
  if (spirit) return [];
  const intent = poolSpiritIntent(nodePool, defaults);
  if (!intent.wanted) return [];
  return [
    {
      severity: 'critical',
      kind: 'missing-pool-spirit',
      cluster,
      pool: nodePool.metadata.name,
      reason: `edge NodePool ${nodePool.metadata.name} has no PoolSpirit: its nodes have no pool-scoped apiserver to fall back on`,
      fixable: true,
    },
  ];
}

/**
 * Readiness of an existing PoolSpirit: paused (info), invalid spec (needs a person), not Available for a
 * while (stuck, a reconcile re-evaluates it) or only just (unready, still converging), and a spec
 * generation the reconciler has not observed yet.
 */
export function readiness(cluster: string, pool: string, spirit: KubeObject, now: Date, t: AuditThresholds): Finding[] {
  const status = spirit.status as PoolSpiritStatus | undefined;
  const object = describeObject(spirit);
  const base = { cluster, pool, object };
  const findings: Finding[] = [];
  const generation = spirit.metadata.generation ?? 0;
  const observed = status?.observedGeneration ?? 0;
  if (generation > observed) {
    findings.push({
      ...base,
      severity: 'warning',
      kind: 'unreconciled',
      reason: `spec generation ${generation} has not been reconciled yet (status reflects generation ${observed || 'none'})`,
      fixable: true,
    });
  }
  if (status?.phase === 'Paused') {
    findings.push({
      ...base,
      severity: 'info',
      kind: 'unready',
      reason: 'paused (spec.paused): the reconciler leaves its objects as they are',
      fixable: false,
    });
    return findings;
  }
  const available = status?.conditions?.find((c) => c.type === 'Available');
  if (available?.status === 'True') return findings;
  if (status?.phase === 'Invalid') {
    findings.push({
      ...base,
      severity: 'critical',
      kind: 'unready',
      reason: `invalid spec: ${available?.message ?? 'see status.conditions'}`,
      fixable: false,
    });
    return findings;
  }
  const since = Date.parse(available?.lastTransitionTime ?? String(spirit.metadata.creationTimestamp ?? ''));
  const age = Number.isFinite(since) ? now.getTime() - since : Infinity;
  const why = available ? `${available.reason}: ${available.message}` : 'no status reported yet';
  if (age > t.stuckAfterMs) {
    findings.push({
      ...base,
      severity: 'critical',
      kind: 'stuck',
      reason: `not Available for ${Number.isFinite(age) ? duration(age) : 'an unknown time'} (over ${duration(t.stuckAfterMs)}): ${why}`,
      fixable: true,
    });
  } else {
    findings.push({
      ...base,
      severity: 'warning',
      kind: 'unready',
      reason: `not Available yet (${duration(age)}): ${why}`,
      fixable: false,
    });
  }
  return findings;
}

/**
 * Orphans: a PoolSpirit whose NodePool is gone (or no longer wants one), and owned objects labelled for a
 * pool that no longer exists. Owner references normally cascade; these are what they missed.
 */
export function orphans(
  cluster: string,
  nodePools: NodePool[],
  spirits: KubeObject[],
  owned: KubeObject[],
  defaults: FleetDefaults,
): Finding[] {
  const findings: Finding[] = [];
  const pools = new Map(nodePools.map((p) => [p.metadata.name, p]));
  for (const spirit of spirits) {
    if (spirit.metadata.deletionTimestamp) continue;
    const pool = poolOfSpirit(spirit);
    const nodePool = pools.get(pool);
    const object = describeObject(spirit);
    if (!nodePool) {
      findings.push({
        severity: 'warning',
        kind: 'orphan',
        cluster,
        pool,
        object,
        reason: `PoolSpirit ${spirit.metadata.name} serves NodePool ${pool}, which does not exist: delete the PoolSpirit (nothing will recreate it)`,
        fixable: false,
      });
      continue;
    }
    const intent = poolSpiritIntent(nodePool, defaults);
    if (!intent.wanted && intent.reason !== 'NodePoolDeleting') {
      findings.push({
        severity: 'warning',
        kind: 'orphan',
        cluster,
        pool,
        object,
        reason: `NodePool ${pool} no longer wants a pool-spirit (${intent.reason}: ${intent.message}) but still has PoolSpirit ${spirit.metadata.name}`,
        fixable: true,
      });
    }
  }
  const labelled = new Set(nodePools.map((p) => labelValue(p.metadata.name)));
  for (const obj of owned) {
    const label = obj.metadata.labels?.[POOL_LABEL];
    if (label === undefined || labelled.has(label) || obj.metadata.deletionTimestamp) continue;
    findings.push({
      severity: 'warning',
      kind: 'orphan',
      cluster,
      pool: label,
      object: describeObject(obj),
      reason: `${describeObject(obj)} belongs to pool ${label}, which has no NodePool: delete it (garbage collection missed it)`,
      fixable: false,
    });
  }
  return findings;
}
