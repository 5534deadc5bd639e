#!/usr/bin/env node
// Runs the CLI on Node 22 (the Lambda runtime the project is tested on). When started by an older system
// Node, re-executes itself with the Node 22 that the project installs as a dev dependency.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const node22 = join(here, '..', 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(node22)) {
    process.stderr.write(
      `spiritctl: needs Node 22 or newer (found ${process.version}); run \`npm install\` in ${join(here, '..')}\n`,
    );
    process.exit(1);
  }
  const result = spawnSync(node22, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
} else {
  await import('../cli/main.ts');
}
