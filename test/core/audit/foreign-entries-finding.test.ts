import { describe, expect, it } from 'vitest';
import { auditCluster, type ClusterObservation } from '../../../core/audit/index.ts';
import { healthyCluster, NOW } from './world.ts';

const ownedOf = (obs: ClusterObservation, kind: string) =>
  obs.owned.find((o) => o.kind === kind && o.metadata.labels?.['poolspirit.io/pool'] === 'hangzhou') as any;
const drift = (obs: ClusterObservation) =>
  auditCluster(obs, { now: NOW }).findings.filter((f) => f.kind === 'spec-drift');

describe('audit: entries others added to lists pool-spirit alone decides', () => {
  it('names a patched-in sidecar and says the reconcile removes it (as it does), never its image', async () => {
    const obs = await healthyCluster();
    ownedOf(obs, 'Deployment').spec.template.spec.containers.push({ name: 'exfil', image: 'evil/exfil:1' });
    const [f] = drift(obs);
    expect(f.object).toBe('Deployment pool-spirit-system/ps-hangzhou');
    expect(f.reason).toMatch(
      /has entries pool-spirit did not render: spec\.template\.spec\.containers\[name=exfil\]; a reconcile removes those entries/,
    );
    expect(f.reason).not.toContain('evil/exfil');
  });

  it('a Service port changed to 8443: the foreign port is named, and the rendered one re-applied', async () => {
    const obs = await healthyCluster();
    ownedOf(obs, 'Service').spec.ports[0].port = 8443;
    const [f] = drift(obs);
    expect(f.reason).toMatch(/spec\.ports\[port=8443,protocol=TCP\]/);
    expect(f.reason).toMatch(/a reconcile removes those entries and re-applies the rendered fields$/);
  });
});
