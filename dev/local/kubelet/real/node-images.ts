/**
 * The images a real node runs, as `npm run images` builds them (scripts/images.ts): one OCI archive per image
 * in .cache/images/<name>/, with the references the bundle catalog renders in build.json. Nothing is pulled:
 * a node imports them into its containerd, under every reference.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BUNDLE_VERSION, DEFAULT_BUNDLES } from '../../../../core/poolspirit/defaults.ts';
import { ctr } from './ctr.ts';

export const IMAGES_DIR = fileURLToPath(new URL('../../../../.cache/images/', import.meta.url));

export interface LocalImage {
  name: string;
  /** The first reference, then the others the image is also known by. */
  refs: string[];
  archive: string;
}

/** The built image `name`, or an error that says how to build it. */
export function requireLocalImage(name: string): LocalImage {
  const record = join(IMAGES_DIR, name, 'build.json');
  if (!existsSync(record)) {
    throw new Error(`image ${name} is not built (no ${record}): run \`npm run images\` (or --only ${name})`);
  }
  const built = JSON.parse(readFileSync(record, 'utf8')) as {
    refs?: string[];
    build?: { ref?: string; archive?: string };
  };
  const refs = built.refs ?? (built.build?.ref ? [built.build.ref] : []);
  const archive = built.build?.archive ?? join(IMAGES_DIR, name, `${name}.oci.tar`);
  if (refs.length === 0 || !existsSync(archive)) {
    throw new Error(
      `image ${name}: ${record} names no reference or its archive ${archive} is missing: run \`npm run images\``,
    );
  }
  return { name, refs, archive };
}

/** Imports an image into a node's containerd (namespace k8s.io, where the CRI plugin looks) under all its refs. */
export async function importImage(socket: string, image: LocalImage): Promise<void> {
  const [ref, ...others] = image.refs;
  // index.json names the image (io.containerd.image.name); only this machine's platform is unpacked.
  await ctr(socket, ['images', 'import', image.archive], 120_000);
  for (const other of others) await ctr(socket, ['images', 'tag', '--force', ref!, other]);
}

/** The sandbox image, and the images of the pool-spirit pod the default bundle renders (scripts/images-catalog.ts names). */
export function defaultNodeImages(): string[] {
  const bundle = DEFAULT_BUNDLES[DEFAULT_BUNDLE_VERSION]!;
  return ['pause', `kube-apiserver-${bundle.apiServer}`, `etcd-${bundle.etcd}`, 'agent'];
}
