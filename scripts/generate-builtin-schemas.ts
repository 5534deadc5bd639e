/**
 * Regenerates dev/local/kube-api/schema/builtin-schemas.json from the kubernetes-types declarations.
 *   npx node scripts/generate-builtin-schemas.ts          write the file
 *   npx node scripts/generate-builtin-schemas.ts --check  exit 1 if the committed file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateBuiltinSchemas } from '../dev/local/kube-api/schema/generate/declarations-to-schemas.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
export const BUILTIN_SCHEMAS_FILE = `${root}dev/local/kube-api/schema/builtin-schemas.json`;

/** The file's exact text: deterministic, so a drift check can compare strings. */
export function renderBuiltinSchemas(): string {
  return `${JSON.stringify(generateBuiltinSchemas(`${root}node_modules/kubernetes-types`), null, 1)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderBuiltinSchemas();
  if (process.argv.includes('--check')) {
    const current = readFileSync(BUILTIN_SCHEMAS_FILE, 'utf8');
    if (current !== text) {
      console.error('builtin-schemas.json is stale: run `npx node scripts/generate-builtin-schemas.ts`');
      process.exit(1);
    }
    console.log('builtin-schemas.json is up to date');
  } else {
    writeFileSync(BUILTIN_SCHEMAS_FILE, text);
    console.log(`wrote ${BUILTIN_SCHEMAS_FILE} (${text.length} bytes)`);
  }
}
