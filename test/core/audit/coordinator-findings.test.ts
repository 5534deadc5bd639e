import { describe, expect, it } from 'vitest';
import { auditCluster } from '../../../core/audit/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { healthyCluster, NOW } from './world.ts';

/** kube-system's certs Secret with the managedFields entries the apiserver would record. */
function certsSecret(entries: Array<{ manager: string; keys: string[]; time?: string }>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'yurt-coordinator-yurthub-certs',
      namespace: 'kube-system',
      managedFields: entries.map((e) => ({
        manager: e.manager,
        operation: e.manager === 'pool-spirit-reconciler' ? 'Apply' : 'Update',
        time: e.time,
        fieldsV1: { 'f:data': Object.fromEntries(e.keys.map((k) => [`f:${k}`, {}])) },
      })),
    },
  };
}

describe('the audit names another writer of the yurt-coordinator certs Secret', () => {
  it('one critical, fixable finding per audited compat pool, naming the writer, its time and keys, and the remedy', async () => {
    const obs = await healthyCluster();
    obs.coordinator = {
      compatPools: ['hangzhou', 'not-audited'],
      certsSecret: certsSecret([
        {
          manager: 'pool-spirit-reconciler',
          keys: ['yurt-coordinator-yurthub-client.crt', 'yurt-coordinator-yurthub-client.key'],
        },
        { manager: 'yurt-manager', keys: ['ca.crt'], time: '2026-12-06T10:00:00Z' },
      ]),
    };
    const findings = auditCluster(obs, { now: NOW }).findings.filter((f) => f.kind === 'foreign-writer');
    expect(findings).toEqual([
      expect.objectContaining({
        severity: 'critical',
        pool: 'hangzhou',
        fixable: true,
        object: 'Secret kube-system/yurt-coordinator-yurthub-certs',
      }),
    ]);
    expect(findings[0]?.reason).toMatch(
      /^kube-system yurt-coordinator-yurthub-certs was written by yurt-manager \(Update, 2026-12-06T10:00:00Z\): ca\.crt: /,
    );
    expect(findings[0]?.reason).toContain('--controllers=*,-yurtcoordinatorcert');
  });

  it('nothing when the product alone owns its keys, when no pool is compat, or when the Secret could not be read', async () => {
    const own = certsSecret([{ manager: 'pool-spirit-reconciler', keys: ['ca.crt'] }]);
    const foreign = certsSecret([{ manager: 'yurt-manager', keys: ['ca.crt'] }]);
    for (const coordinator of [
      { compatPools: ['hangzhou'], certsSecret: own },
      { compatPools: [], certsSecret: foreign },
      { compatPools: ['hangzhou'] },
    ]) {
      const obs = { ...(await healthyCluster()), coordinator };
      expect(auditCluster(obs, { now: NOW }).findings).toEqual([]);
    }
  });
});
