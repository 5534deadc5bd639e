/**
 * tools/images/pins.json: the Node runtime in the images is the one the project runs and tests on (the
 * `node` dev dependency), and every Debian package is pinned for both platforms.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARCHES, readPins } from '../../../scripts/images-inputs.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('image pins', () => {
  const pins = readPins();

  it('Node in the images is the version of the node dev dependency', () => {
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules/node/package.json'), 'utf8')) as {
      version: string;
    };
    expect(pins.node.version).toBe(installed.version);
    expect(process.versions.node).toBe(installed.version);
  });

  it('each Debian package is pinned once per platform, at one version', () => {
    const names = [...new Set(pins.debian.packages.map((p) => p.package))];
    for (const name of names) {
      const pinned = pins.debian.packages.filter((p) => p.package === name);
      expect(pinned.map((p) => p.arch).sort(), name).toEqual([...ARCHES]);
      expect(new Set(pinned.map((p) => p.version)).size, name).toBe(1);
      for (const p of pinned) expect(p.path, name).toContain(`_${p.arch}.deb`);
    }
  });
});
