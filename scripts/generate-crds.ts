/**
 * Writes the CRDs under infra/crds/ from their sources in core/. A test (test/core/crd/crd.test.ts)
 * fails when a committed file differs from what this script would write.
 *   node scripts/generate-crds.ts
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { manifestYaml } from '../core/crd/yaml.ts';
import { nodePoolCrd } from '../core/nodepool-crd.ts';
import { poolSpiritCrd } from '../core/poolspirit/crd.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Repository-relative path → file content. */
export function crdFiles(): Record<string, string> {
  return {
    'infra/crds/poolspirit.yaml': manifestYaml(poolSpiritCrd(), 'core/poolspirit/api.ts'),
    'infra/crds/nodepool.yaml': manifestYaml(nodePoolCrd(), 'core/nodepool-crd.ts'),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [path, content] of Object.entries(crdFiles())) {
    writeFileSync(join(root, path), content);
    console.log(`wrote ${path}`);
  }
}
