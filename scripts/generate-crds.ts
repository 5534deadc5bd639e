/**
 * Writes the CRDs under infra/crds/ from their sources in core/, and the bootstrap manifests (which carry the
 * NodePool CRD) as the YAML text the reconciler puts in each pool's bootstrap ConfigMap
 * (core/render/bootstrap-manifests.json: pre-rendered so the functions do not load a YAML writer at start,
 * docs/deploy.md). A test (test/core/crd/crd.test.ts) fails when a committed file differs from what this
 * script would write.
 *   node scripts/generate-crds.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { manifestsYaml, manifestYaml } from '../core/crd/yaml.ts';
import { nodePoolCrd } from '../core/nodepool-crd.ts';
import { poolSpiritCrd } from '../core/poolspirit/crd.ts';
import { bootstrapManifests } from '../core/render/bootstrap.ts';
import { compatBootstrapManifests } from '../core/yurt-coordinator/pool.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Repository-relative path → file content. */
export function crdFiles(): Record<string, string> {
  return {
    'infra/crds/poolspirit.yaml': manifestYaml(poolSpiritCrd(), 'core/poolspirit/api.ts'),
    'infra/crds/nodepool.yaml': manifestYaml(nodePoolCrd(), 'core/nodepool-crd.ts'),
    'core/render/bootstrap-manifests.json': `${JSON.stringify(
      { plain: manifestsYaml(bootstrapManifests()), compat: manifestsYaml(compatBootstrapManifests()) },
      null,
      2,
    )}\n`,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, content] of Object.entries(crdFiles())) {
    writeFileSync(join(root, path), content);
    console.log(`wrote ${path}`);
  }
}
