import { describe, expect, it } from 'vitest';
import { evictionGraceSeconds, placePod, unfitReason } from '../../../../dev/local/kubelet/scheduling.ts';

const node = (name: string, pool: string, ready = true, extra: Record<string, any> = {}) => ({
  metadata: { name, labels: { 'apps.openyurt.io/nodepool': pool } },
  spec: { ...extra },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
const poolPod = (pool: string, tolerations: any[] = []) => ({
  spec: {
    tolerations,
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'apps.openyurt.io/nodepool', operator: 'In', values: [pool] }] },
          ],
        },
      },
    },
  },
});

describe('placePod', () => {
  it('places a pod only on a Ready node of its pool, least loaded first', () => {
    const nodes = [node('a1', 'a'), node('a2', 'a'), node('b1', 'b'), node('a3', 'a', false)];
    const load: Record<string, number> = { a1: 3, a2: 1 };
    expect(placePod(poolPod('a'), nodes, (n) => load[n] ?? 0)).toEqual({ nodeName: 'a2' });
  });

  it('explains why nothing fits, like kube-scheduler', () => {
    const nodes = [node('a1', 'a', false), node('b1', 'b')];
    expect(placePod(poolPod('a'), nodes, () => 0)).toEqual({
      reason: "0/2 nodes are available: 1 node(s) were not ready, 1 node(s) didn't match Pod's node affinity/selector.",
    });
  });

  it('respects NoSchedule taints unless tolerated', () => {
    const tainted = node('a1', 'a', true, { taints: [{ key: 'edge', value: 'x', effect: 'NoSchedule' }] });
    expect(unfitReason(poolPod('a'), tainted)).toMatch(/untolerated taint/);
    expect(
      unfitReason(poolPod('a', [{ key: 'edge', operator: 'Equal', value: 'x', effect: 'NoSchedule' }]), tainted),
    ).toBeUndefined();
  });
});

describe('evictionGraceSeconds', () => {
  it('reads the not-ready/unreachable toleration seconds', () => {
    const pod = poolPod('a', [
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
    expect(evictionGraceSeconds(pod, node('a1', 'a'))).toBeUndefined();
    expect(evictionGraceSeconds(pod, node('a1', 'a', false))).toBe(60);
    expect(evictionGraceSeconds(pod, undefined)).toBe(30);
    expect(evictionGraceSeconds(poolPod('a'), undefined)).toBe(0);
    // The upstream mistake (#1212): tolerating every NoExecute taint forever means never moving.
    expect(evictionGraceSeconds(poolPod('a', [{ operator: 'Exists', effect: 'NoExecute' }]), undefined)).toBe(Infinity);
  });
});
