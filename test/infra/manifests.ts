/**
 * Shared by the infra tests: the built kustomize output (kubectl's built-in kustomize, the same build
 * `kubectl apply -k` does), a rendered pool-spirit, and the inputs of the permission derivation.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { CLUSTER_CA_CONFIGMAP } from '../../adapters/kubernetes/index.ts';
import type { NodePool } from '../../core/index.ts';
import { cachingKeyFactory, DEFAULT_NAMESPACE, parsePoolSpiritSpec, renderPoolSpirit } from '../../core/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import type { PermissionInputs } from '../../core/security/reconciler-permissions.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

import { KUBECTL } from '../../dev/local/kube-bins/index.ts';

export { KUBECTL };

const run = promisify(execFile);

/**
 * Where the ClusterClient creates Events about cluster-scoped objects
 * (test/infra/cluster/reconciler/reconciler-rbac.test.ts checks it live).
 */
export const EVENT_NAMESPACE = 'default';

export function parseManifests(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`YAML: ${doc.errors[0].message}`);
      return doc.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null);
}

const built = new Map<string, Promise<{ text: string; objects: KubeObject[] }>>();

/** `kubectl kustomize <dir>` (relative to the repository root), parsed; built once per test file. */
export function kustomize(dir: string): Promise<{ text: string; objects: KubeObject[] }> {
  let result = built.get(dir);
  if (!result) {
    result = run(KUBECTL, ['kustomize', dir], { cwd: REPO_ROOT, maxBuffer: 32 << 20 }).then(({ stdout }) => ({
      text: stdout,
      objects: parseManifests(stdout),
    }));
    built.set(dir, result);
  }
  // Callers get their own copy to change.
  return result.then((r) => ({ text: r.text, objects: structuredClone(r.objects) }));
}

/** An operator's overlay of these bases and components (paths from the repository root), built. */
export async function kustomizeOverlay(resources: string[], components: string[] = []): Promise<KubeObject[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-overlay-'));
  try {
    // kustomize takes relative paths only.
    const rel = (p: string) => relative(dir, join(REPO_ROOT, p));
    const lines = [
      'resources:',
      ...resources.map((r) => `  - ${rel(r)}`),
      ...(components.length ? ['components:', ...components.map((c) => `  - ${rel(c)}`)] : []),
    ];
    await writeFile(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    const { stdout } = await run(KUBECTL, ['kustomize', dir], { maxBuffer: 32 << 20 });
    return parseManifests(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const keys = cachingKeyFactory();

/** One pool's rendered objects, as the reconcile would apply them (a stand-in CA bundle: not parsed here). */
export async function renderPool(pool = 'edge-a', nodePoolSpec: Record<string, unknown> = {}) {
  const parsed = parsePoolSpiritSpec({ nodePool: pool });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const nodePool: NodePool = {
    apiVersion: 'apps.openyurt.io/v1beta2',
    kind: 'NodePool',
    metadata: { name: pool, uid: `uid-np-${pool}` },
    spec: { type: 'Edge', ...nodePoolSpec },
  } as NodePool;
  return renderPoolSpirit({
    poolSpirit: { metadata: { name: pool, uid: `uid-ps-${pool}` }, spec: parsed.spec },
    nodePool,
    cluster: {
      caBundlePem: '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n',
      clusterDomain: 'cluster.local',
      namespace: DEFAULT_NAMESPACE,
    },
    now: new Date('2026-01-15T12:00:00Z'),
    keys,
  });
}

export async function permissionInputs(): Promise<PermissionInputs> {
  const rendered = await renderPool();
  return {
    rendered: rendered.objects,
    namespace: DEFAULT_NAMESPACE,
    clusterCa: { namespace: CLUSTER_CA_CONFIGMAP.namespace, name: CLUSTER_CA_CONFIGMAP.name },
    eventNamespace: EVENT_NAMESPACE,
  };
}

export function find(objects: KubeObject[], kind: string, name: string, namespace?: string): KubeObject {
  const found = objects.find(
    (o) =>
      o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace),
  );
  if (!found) throw new Error(`${kind} ${namespace ? `${namespace}/` : ''}${name} not in the manifests`);
  return found;
}
