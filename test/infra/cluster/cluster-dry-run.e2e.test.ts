/**
 * `kubectl apply --dry-run=server` of infra/cluster against the local API, in the order an install takes
 * (docs/cluster-install.md): the CRDs and the namespace for real first — a server dry-run of a namespaced
 * object fails when its namespace is only being created in the same dry run, on a real apiserver too —
 * then everything else as a server-side dry run, which the API validates (schemas, references to the CRD
 * kinds, RBAC objects) without storing anything.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { KubeObject } from '../../../core/kube.ts';
import { startTestCluster, type TestCluster, waitFor } from '../../support/local-cluster.ts';
import { KUBECTL, kustomize, parseManifests, REPO_ROOT } from '../manifests.ts';

const run = promisify(execFile);

const isFirstPhase = (o: KubeObject) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace';
const docs = (objects: KubeObject[]) => objects.map((o) => `---\n${stringify(o)}`).join('');

describe('infra/cluster against the local API', () => {
  let cluster: TestCluster;
  const kubectl = async (args: string[], stdin?: string) => {
    const child = run(KUBECTL, [`--kubeconfig=${cluster.kubeconfigPath}`, ...args], { maxBuffer: 16 << 20 });
    if (stdin !== undefined) child.child.stdin!.end(stdin);
    return (await child).stdout;
  };

  beforeAll(async () => {
    cluster = await startTestCluster({ crds: false });
  });
  afterAll(() => cluster?.stop());

  it('installs: CRDs and namespace for real, then every other object passes a server dry run', async () => {
    const { objects } = await kustomize('infra/cluster');
    // No OpenYurt here: its NodePool CRD comes from infra/crds, as on any cluster without OpenYurt.
    const nodePoolCrd = parseManifests(await readFile(join(REPO_ROOT, 'infra/crds/nodepool.yaml'), 'utf8'));
    const first = [...nodePoolCrd, ...objects.filter(isFirstPhase)];
    expect(first.map((o) => o.kind).sort()).toEqual([
      'CustomResourceDefinition',
      'CustomResourceDefinition',
      'Namespace',
    ]);
    await kubectl(['apply', '--server-side', '--field-manager=pool-spirit-install', '-f', '-'], docs(first));
    await waitFor(
      async () => (await kubectl(['get', 'poolspirits,nodepools', '-o', 'name'])) !== undefined,
      10_000,
      'the CRDs to be served',
    );

    const served = new Set(
      (await kubectl(['api-resources', '--no-headers', '-o', 'wide']))
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const cols = line.trim().split(/\s+/);
          // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND VERBS [CATEGORIES]: find APIVERSION by NAMESPACED after it.
          const at = cols.findIndex((c, i) => i > 0 && (c === 'true' || c === 'false'));
          return `${cols[at - 1]} ${cols[at + 1]}`;
        }),
    );
    const rest = objects.filter((o) => !isFirstPhase(o));
    const unserved = [...new Set(rest.map((o) => `${o.apiVersion} ${o.kind}`).filter((k) => !served.has(k)))];
    expect(unserved, 'kinds the local API does not serve').toEqual([]);
    const checkable = rest;
    expect(checkable.map((o) => o.kind)).toContain('NetworkPolicy');

    const out = await kubectl(
      ['apply', '--dry-run=server', '--server-side', '--field-manager=pool-spirit-install', '-f', '-'],
      docs(checkable),
    );
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(checkable.length);
    for (const line of lines) expect(line).toMatch(/ serverside-applied \(server dry run\)$/);

    // A dry run stores nothing.
    expect(
      await kubectl([
        'get',
        'deployments,serviceaccounts,roles',
        '-n',
        'pool-spirit-system',
        '-o',
        'name',
        '--field-selector=metadata.name!=default',
      ]),
    ).toBe('');
    expect(await kubectl(['get', 'clusterroles', '-o', 'name'])).not.toContain('pool-spirit-reconciler');
  });

  it('the example per-cluster overlay sets what the base leaves open, and changes nothing else', async () => {
    const base = (await kustomize('infra/cluster')).objects;
    const example = (await kustomize('infra/examples/eks-cluster')).objects;
    const ids = (objs: KubeObject[]) =>
      objs
        .map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`)
        .sort();
    expect(ids(example)).toEqual(ids(base));
    const config = (objs: KubeObject[]) =>
      objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('pool-spirit-forwarder'))!.data as Record<
        string,
        string
      >;
    expect(config(base)['cluster-id']).toBeUndefined();
    expect(Object.keys(config(example)).sort()).toEqual(['cluster-id', 'event-bus', 'region']);
  });
});
