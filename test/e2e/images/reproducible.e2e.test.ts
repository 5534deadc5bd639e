/**
 * Two builds from the same commit give the same images, byte for byte: for the pause image (a C binary) and
 * the agent (Debian libraries, Node, an esbuild bundle), the build in .cache/images and one from nothing in a
 * new directory have the same digests, OCI archives and SBOMs. A different SOURCE_DATE_EPOCH gives another
 * digest: the comparison sees a difference where there is one.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BuiltImage, buildImages, ROOT } from './support.ts';

const epoch = execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: ROOT, encoding: 'utf8' }).trim();
const dirs: string[] = [];
const outDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ps-images-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const fileHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const summary = (images: BuiltImage[]) =>
  images.map((i) => ({ name: i.name, digest: i.digest, archive: fileHash(i.archive), sbom: fileHash(i.sbom) }));

describe('reproducible images', () => {
  it('two builds of the same commit: same digests, archives and SBOMs', { timeout: 300_000 }, async () => {
    const env = { ...process.env, SOURCE_DATE_EPOCH: epoch };
    // The images in .cache/images (built before, e.g. by scripts/ensure-env.sh, or now if missing) against a
    // build from nothing in a new directory.
    const first = await buildImages(['--only', 'pause,agent', '--no-sign'], env);
    const second = await buildImages(['--only', 'pause,agent', '--no-sign', '--out', outDir()], env);
    expect(first.map((i) => i.platforms)).toEqual([
      ['linux/amd64', 'linux/arm64'],
      ['linux/amd64', 'linux/arm64'],
    ]);
    expect(summary(second)).toEqual(summary(first));
  });

  it('another SOURCE_DATE_EPOCH gives another digest', { timeout: 120_000 }, async () => {
    const [a] = await buildImages(['--only', 'pause', '--no-sign', '--out', outDir()], {
      ...process.env,
      SOURCE_DATE_EPOCH: epoch,
    });
    const [b] = await buildImages(['--only', 'pause', '--no-sign', '--out', outDir()], {
      ...process.env,
      SOURCE_DATE_EPOCH: String(Number(epoch) + 1),
    });
    expect(b.digest).not.toBe(a.digest);
  });
});
