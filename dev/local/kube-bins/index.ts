/**
 * Where the pinned Kubernetes binaries live. `npm run kube-bins` (scripts/kube-bins.sh) builds them from the
 * Go modules under tools/ into a git-ignored cache; `npm test` builds them first. An environment variable of
 * the binary's name in capitals (KUBECTL, …) points at another build instead.
 *
 * Nothing here falls back to a binary found on PATH: a test judged by whatever kubectl a machine happens to
 * have would judge against an unknown version.
 */
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KUBE_BINS_DIR = fileURLToPath(new URL('../../../.cache/kube-bins/bin/', import.meta.url));

export type KubeBinary =
  | 'kubectl'
  | 'pointer-fields'
  | 'kube-apiserver'
  | 'kube-apiserver-v1.37.2'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'etcd'
  | 'etcdctl'
  | 'yurthub'
  | 'yurt-manager'
  | 'yurt-manager-v1.7.0';

/**
 * Which local build realises each component release a bundle names (core/poolspirit/defaults.ts): the
 * process kubelet runs the binary of the release in the container's image tag. etcd's tag carries an image
 * revision (`3.6.16-0`); the binary is the release before it.
 */
export const LOCAL_RELEASES = {
  'kube-apiserver': { 'v1.36.3': 'kube-apiserver', 'v1.37.2': 'kube-apiserver-v1.37.2' },
  etcd: { '3.6.16': 'etcd' },
} as const satisfies Record<string, Record<string, KubeBinary>>;

export type ReleasedComponent = keyof typeof LOCAL_RELEASES;

/** The local binary for `image` (`registry/name:tag`) of a component, or an error naming what exists. */
export function binaryForImage(component: ReleasedComponent, image: string): KubeBinary {
  const tag = image.slice(image.lastIndexOf(':') + 1);
  const release = component === 'etcd' ? tag.replace(/-\d+$/, '') : tag;
  const releases: Record<string, KubeBinary> = LOCAL_RELEASES[component];
  const binary = releases[release];
  if (!binary) {
    throw new Error(
      `no local build of ${component} ${release} (image ${image}); built releases: ${Object.keys(releases).join(', ')} — add one to tools/ and scripts/kube-bins.sh`,
    );
  }
  return binary;
}

/** KUBECTL, POINTER_FIELDS, … */
function envName(name: KubeBinary): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

export function kubeBinaryPath(name: KubeBinary): string {
  return process.env[envName(name)] ?? join(KUBE_BINS_DIR, name);
}

/** The path of a built binary, or an error that says how to get it. */
export function requireKubeBinary(name: KubeBinary): string {
  const path = kubeBinaryPath(name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `${name} not found at ${path}. It is built from the pinned Go module under tools/: run \`npm run kube-bins\` ` +
        `(needs Go ≥ 1.26 and the Go module proxy), or set ${envName(name)} to an existing binary.`,
    );
  }
  return path;
}

export const KUBECTL = kubeBinaryPath('kubectl');

/** The OpenYurt releases whose own CRDs the local stack can install (`--openyurt`), as scripts/kube-bins.sh fetches them. */
export const OPENYURT_RELEASES = ['v1.5.1', 'v1.7.0'] as const;
export type OpenYurtRelease = (typeof OPENYURT_RELEASES)[number];

/**
 * OpenYurt's own CRDs of a release (charts/yurt-manager/crds of its Go module), as `npm run kube-bins` puts them
 * beside the binaries; an error that says how to get them when they are not there.
 */
export function requireOpenYurtCrds(release: OpenYurtRelease): string {
  const dir = fileURLToPath(new URL(`../../../.cache/kube-bins/openyurt/${release}/crds/`, import.meta.url));
  try {
    accessSync(join(dir, 'apps.openyurt.io_nodepools.yaml'), constants.R_OK);
  } catch {
    throw new Error(
      `OpenYurt ${release}'s CRDs not found in ${dir}. They are read from its pinned Go module: run \`npm run kube-bins\` ` +
        '(needs Go ≥ 1.26 and the Go module proxy).',
    );
  }
  return dir;
}

/** OpenYurt's yurt-manager chart of a release as `npm run kube-bins` puts it beside the CRDs: its templates and values. */
export interface OpenYurtChart {
  /** charts/yurt-manager/templates (Helm templates, rendered by dev/local/openyurt/chart.ts). */
  templatesDir: string;
  /** charts/yurt-manager/values.yaml */
  valuesFile: string;
}

/**
 * OpenYurt's yurt-manager chart (charts/yurt-manager/templates and values.yaml of its Go module), as
 * `npm run kube-bins` puts it beside the CRDs; an error that says how to get it when it is not there.
 */
export function requireOpenYurtChart(release: OpenYurtRelease): OpenYurtChart {
  const base = fileURLToPath(new URL(`../../../.cache/kube-bins/openyurt/${release}/`, import.meta.url));
  const chart = { templatesDir: join(base, 'templates'), valuesFile: join(base, 'values.yaml') };
  try {
    accessSync(join(chart.templatesDir, 'yurt-manager.yaml'), constants.R_OK);
    accessSync(chart.valuesFile, constants.R_OK);
  } catch {
    throw new Error(
      `OpenYurt ${release}'s yurt-manager chart templates not found in ${base}. They are read from its pinned Go ` +
        'module: run `npm run kube-bins` (needs Go ≥ 1.26 and the Go module proxy).',
    );
  }
  return chart;
}
