import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { nodePoolCrd, poolSpiritCrd } from '../../../core/index.ts';
import { crdFiles } from '../../../scripts/generate-crds.ts';

const root = join(import.meta.dirname, '..', '..', '..');

/** Structural-schema rules the API server enforces on a CRD, the ones a generator can get wrong. */
function structuralProblems(node: Record<string, unknown>, at = ''): string[] {
  const out: string[] = [];
  if ('$ref' in node) out.push(`${at}: $ref`);
  if (node.additionalProperties === false) out.push(`${at}: additionalProperties false`);
  if (node.properties && node.additionalProperties) out.push(`${at}: properties and additionalProperties`);
  if (node.default !== undefined) out.push(`${at}: default`);
  const typed =
    typeof node.type === 'string' ||
    node['x-kubernetes-int-or-string'] === true ||
    node['x-kubernetes-preserve-unknown-fields'] === true;
  if (!typed) out.push(`${at}: untyped`);
  if (node.anyOf && node['x-kubernetes-int-or-string'] !== true) out.push(`${at}: anyOf outside int-or-string`);
  for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>))
    out.push(...structuralProblems(v, `${at}.${k}`));
  if (typeof node.additionalProperties === 'object')
    out.push(...structuralProblems(node.additionalProperties as Record<string, unknown>, `${at}.*`));
  if (node.items) out.push(...structuralProblems(node.items as Record<string, unknown>, `${at}[]`));
  return out;
}

describe('CRDs', () => {
  it('infra/crds and the pre-rendered bootstrap manifests match what the generator writes (run node scripts/generate-crds.ts)', () => {
    for (const [path, content] of Object.entries(crdFiles())) {
      expect(readFileSync(join(root, path), 'utf8'), `${path} drifted from its source`).toBe(content);
    }
  });

  it('the PoolSpirit CRD is structural, cluster-scoped, with a status subresource and printer columns', () => {
    const crd = parse(readFileSync(join(root, 'infra/crds/poolspirit.yaml'), 'utf8'));
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toMatchObject({ kind: 'PoolSpirit', plural: 'poolspirits', shortNames: ['ps'] });
    const [version] = crd.spec.versions;
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      'Pool',
      'Phase',
      'Available',
      'Leader',
      'Version',
      'Endpoint',
      'Age',
    ]);
    expect(structuralProblems(version.schema.openAPIV3Schema)).toEqual([]);
    const spec = version.schema.openAPIV3Schema.properties.spec.properties;
    expect(spec.etcd.properties.storage.properties.sizeLimit).toMatchObject({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
    expect(spec.etcd.properties.extraArgs.additionalProperties).toEqual({ type: 'string' });
    expect(spec.etcd.properties.storage.properties.medium.enum).toEqual(['Memory']);
    expect(version.schema.openAPIV3Schema.properties.status.properties.conditions['x-kubernetes-list-type']).toBe(
      'map',
    );
  });

  it('the NodePool CRD serves v1beta1 and stores v1beta2, cluster-scoped, short name np', () => {
    const crd = parse(readFileSync(join(root, 'infra/crds/nodepool.yaml'), 'utf8'));
    expect(crd.metadata.name).toBe('nodepools.apps.openyurt.io');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names.shortNames).toEqual(['np']);
    expect(
      crd.spec.versions.map((v: { name: string; served: boolean; storage: boolean }) => [v.name, v.served, v.storage]),
    ).toEqual([
      ['v1beta1', true, false],
      ['v1beta2', true, true],
    ]);
    for (const v of crd.spec.versions) {
      expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
      expect(v.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
        'Type',
        'ReadyNodes',
        'NotReadyNodes',
        'Age',
      ]);
    }
    const v2 = crd.spec.versions[1].schema.openAPIV3Schema.properties;
    expect(Object.keys(v2.spec.properties)).toEqual(
      expect.arrayContaining([
        'type',
        'hostNetwork',
        'labels',
        'annotations',
        'taints',
        'enableLeaderElection',
        'leaderElectionStrategy',
        'leaderReplicas',
        'poolScopeMetadata',
      ]),
    );
    expect(Object.keys(v2.status.properties)).toEqual(
      expect.arrayContaining(['readyNodeNum', 'unreadyNodeNum', 'nodes', 'leaderEndpoints', 'conditions']),
    );
    expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.enableLeaderElection).toBeUndefined();
  });

  it('generation is deterministic', () => {
    expect(JSON.stringify(poolSpiritCrd())).toBe(JSON.stringify(poolSpiritCrd()));
    expect(JSON.stringify(nodePoolCrd())).toBe(JSON.stringify(nodePoolCrd()));
  });
});
