/**
 * Every image carries a cosign signature that the real cosign verifies with the public key, as a user
 * verifies after pushing to their registry (`cosign verify --key … --insecure-ignore-tlog`); a changed image
 * with the signature copied beside it, and a key other than the signer's, both fail verification. The
 * layouts are served by tools/images' in-memory registry on the loopback address.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveImages } from '../../../scripts/images-sign.ts';
import { type BuiltImage, buildImages, CACHE, COSIGN, IMAGES_TOOL, run } from './support.ts';

const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const tools = { images: IMAGES_TOOL, cosign: COSIGN };
const cosignEnv = { ...process.env, COSIGN_PASSWORD: '' };
const verify = (local: string, key: string) =>
  run(COSIGN, ['verify', '--key', key, '--insecure-ignore-tlog', '--allow-http-registry', local], cosignEnv);

let images: BuiltImage[];
let registry: Awaited<ReturnType<typeof serveImages>>;
const outputs: string[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'ps-cosign-'));

beforeAll(async () => {
  // Builds and signs whatever is missing; after `scripts/ensure-env.sh --tests` everything is there.
  images = await buildImages([]);
  registry = await serveImages(
    tools,
    images.map((i) => join(CACHE, i.name)),
    false,
  );
}, 1_800_000);
afterAll(async () => {
  await registry?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const localOf = (name: string) => {
  const s = registry.served.images.find((i) => i.dir === join(CACHE, name));
  if (!s) throw new Error(`${name} is not served`);
  return s.local;
};

describe('image signatures', () => {
  it('cosign verifies every image with the public key', async () => {
    expect(images.map((i) => i.name)).toEqual([
      'pause',
      'kube-apiserver-v1.36.3',
      'kube-apiserver-v1.37.2',
      'etcd-3.6.16-0',
      'agent',
      'forwarder',
    ]);
    const results = await Promise.all(images.map((i) => verify(localOf(i.name), i.signature?.publicKey ?? 'missing')));
    for (const [n, r] of results.entries()) {
      outputs.push(r.stdout, r.stderr);
      expect(r.code, `${images[n].name}: ${r.stderr}`).toBe(0);
      // The signed identity is the image's real repository, not the loopback registry it was signed in.
      const payload = JSON.parse(r.stdout) as {
        critical: { identity: { 'docker-reference': string }; image: { 'docker-manifest-digest': string } };
      }[];
      expect(payload[0].critical.image['docker-manifest-digest']).toBe(images[n].digest);
      expect(payload[0].critical.identity['docker-reference']).toBe(
        images[n].ref.slice(0, images[n].ref.lastIndexOf(':')),
      );
    }
  });

  it('a changed image with the signature copied beside it fails verification', async () => {
    const local = localOf('pause');
    const [repo, digest] = local.split('@');
    const host = repo.slice(0, repo.indexOf('/'));
    const path = repo.slice(repo.indexOf('/') + 1);
    const manifests = `http://${host}/v2/${path}/manifests`;
    const index = JSON.parse(
      await (await fetch(`${manifests}/${digest}`, { headers: { accept: OCI_INDEX } })).text(),
    ) as Record<string, unknown>;
    const changed = Buffer.from(JSON.stringify({ ...index, annotations: { changed: 'yes' } }));
    const changedDigest = `sha256:${createHash('sha256').update(changed).digest('hex')}`;
    const put = await fetch(`${manifests}/${changedDigest}`, {
      method: 'PUT',
      headers: { 'content-type': OCI_INDEX },
      body: changed,
    });
    expect(put.status).toBe(201);
    const sig = Buffer.from(
      await (
        await fetch(`${manifests}/${digest.replace(':', '-')}.sig`, { headers: { accept: OCI_MANIFEST } })
      ).arrayBuffer(),
    );
    const copied = await fetch(`${manifests}/${changedDigest.replace(':', '-')}.sig`, {
      method: 'PUT',
      headers: { 'content-type': OCI_MANIFEST },
      body: sig,
    });
    expect(copied.status).toBe(201);

    const [original, tampered] = await Promise.all([
      verify(local, join(CACHE, 'keys/cosign.pub')),
      verify(`${repo}@${changedDigest}`, join(CACHE, 'keys/cosign.pub')),
    ]);
    outputs.push(original.stdout, original.stderr, tampered.stdout, tampered.stderr);
    expect(original.code).toBe(0);
    expect(tampered.code).not.toBe(0);
    expect(tampered.stderr).toMatch(/no matching signatures|invalid/i);
  });

  it('pushed to another repository (as to ECR), the same digest and its signature verify', async () => {
    const [repo] = localOf('forwarder').split('@');
    const target = `${repo.slice(0, repo.indexOf('/'))}/elsewhere/pool-spirit/forwarder`;
    const pushed = await run(IMAGES_TOOL, ['push', '--insecure', join(CACHE, 'forwarder'), target]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const forwarder = images.find((i) => i.name === 'forwarder');
    expect(pushed.stdout.trim()).toBe(`${target}@${forwarder?.digest}`);
    const r = await verify(pushed.stdout.trim(), join(CACHE, 'keys/cosign.pub'));
    outputs.push(r.stdout, r.stderr);
    expect(r.code, r.stderr).toBe(0);
  });

  it("another key's public half fails verification", async () => {
    const gen = await run(COSIGN, ['generate-key-pair', '--output-key-prefix', join(tmp, 'other')], cosignEnv);
    expect(gen.code, gen.stderr).toBe(0);
    const r = await verify(localOf('agent'), join(tmp, 'other.pub'));
    outputs.push(r.stdout, r.stderr);
    expect(r.code).not.toBe(0);
  });

  it('no output shows the private key', () => {
    const key = readFileSync(join(CACHE, 'keys/cosign.key'), 'utf8');
    const body = key.split('\n').find((l) => l.length > 40) ?? key;
    expect(outputs.join('\n')).not.toContain(body);
    expect(outputs.join('\n')).not.toContain('PRIVATE KEY');
  });
});
