/**
 * The images the product ships and the local node runs, under the references the bundle catalog renders
 * (core/poolspirit/defaults.ts): each one's inputs, layers, configuration and SBOM components.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { DEFAULT_BUNDLES, DEFAULT_IMAGES } from '../core/poolspirit/defaults.ts';
import { LOCAL_RELEASES } from '../dev/local/kube-bins/index.ts';
import {
  ARCHES,
  type Arch,
  CACHE,
  debRoot,
  goModuleDir,
  kubeBinaries,
  nodeRuntime,
  type Pins,
  pauseBinary,
  ROOT,
  writeIfChanged,
} from './images-inputs.ts';
import { baseLayer, debRuntimeFiles, type Entry, file, type LayerSpec, NONROOT, tree } from './images-rootfs.ts';

export interface SbomComponent {
  type: 'library' | 'application' | 'operating-system';
  name: string;
  version: string;
  purl: string;
  license?: string;
  comment?: string;
}

export interface Prepared {
  platforms: { arch: Arch; layers: LayerSpec[] }[];
  config: { user: string; entrypoint: string[]; env: string[]; workingDir?: string; exposedPorts?: string[] };
  components: SbomComponent[];
  /** Go binaries whose modules cyclonedx-gomod lists (one per image: the platforms hold the same modules). */
  goBinaries: string[];
}

export interface ImageDef {
  name: string;
  ref: string;
  extraRefs: string[];
  version: string;
  prepare(pins: Pins): Promise<Prepared>;
}

const PATH_ENV = 'PATH=/usr/local/bin:/usr/bin:/bin';
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

/** upstream's pause tag, as the pinned Kubernetes release builds it (build/pause/Makefile `TAG ?=`). */
function pauseTag(): string {
  const { dir } = goModuleDir('tools/kube', 'k8s.io/kubernetes');
  const tag = /^TAG \?= (\S+)$/m.exec(readFileSync(join(dir, 'build/pause/Makefile'), 'utf8'))?.[1];
  if (!tag) throw new Error(`${dir}/build/pause/Makefile: no TAG`);
  return tag;
}

function debComponent(name: string, version: string, arch: Arch): SbomComponent {
  return {
    type: 'library',
    name,
    version,
    purl: `pkg:deb/debian/${name}@${encodeURIComponent(version)}?arch=${arch}&distro=debian-12`,
  };
}

function installedDebVersion(pkg: string): string {
  // dpkg-query's own --showformat field syntax, written literally.
  return execFileSync('dpkg-query', ['-W', '-f', `\${Version}`, pkg], { encoding: 'utf8' }).trim();
}

const pause = (): ImageDef => {
  const tag = pauseTag();
  return {
    name: 'pause',
    ref: `registry.k8s.io/pause:${tag}`,
    extraRefs: [],
    version: tag,
    async prepare() {
      const platforms = ARCHES.map((arch) => {
        const built = pauseBinary(arch, tag);
        return {
          arch,
          built,
          layers: [
            {
              createdBy: `pause.c (${built.source}), ${built.compiler} -static`,
              entries: [file('pause', built.binary, true)],
            },
          ],
        };
      });
      const { version } = goModuleDir('tools/kube', 'k8s.io/kubernetes');
      const components: SbomComponent[] = [
        {
          type: 'library',
          name: 'k8s.io/kubernetes',
          version,
          purl: `pkg:golang/k8s.io/kubernetes@${version}`,
          license: 'Apache-2.0',
          comment: 'build/pause/linux/pause.c',
        },
        // glibc is linked in statically: the C library of the compiler that built each platform.
        {
          ...debComponent('libc6-dev', installedDebVersion('libc6-dev'), 'amd64'),
          comment: 'statically linked (linux/amd64)',
        },
        {
          ...debComponent('libc6-dev-arm64-cross', installedDebVersion('libc6-dev-arm64-cross'), 'amd64'),
          comment: 'statically linked (linux/arm64)',
        },
      ];
      // upstream's pause runs as 65535 (build/pause/Dockerfile); so does this one.
      return {
        platforms,
        config: { user: '65535:65535', entrypoint: ['/pause'], env: [PATH_ENV] },
        components,
        goBinaries: [],
      };
    },
  };
};

/** A static Go binary on the distroless-like base, at upstream's path (/usr/local/bin). */
function goImage(
  name: string,
  ref: string,
  version: string,
  binary: keyof ReturnType<typeof kubeBinaries> & string,
): ImageDef {
  const command = name.startsWith('etcd') ? 'etcd' : 'kube-apiserver';
  return {
    name,
    ref,
    extraRefs: [],
    version,
    async prepare() {
      const bins = Object.fromEntries(ARCHES.map((arch) => [arch, kubeBinaries(arch)[binary]])) as Record<Arch, string>;
      const platforms = ARCHES.map((arch) => ({
        arch,
        layers: [
          baseLayer(),
          {
            createdBy: `${command} ${version} (scripts/kube-bins.sh, CGO_ENABLED=0)`,
            entries: [file(`usr/local/bin/${command}`, bins[arch], true)],
          },
        ],
      }));
      return {
        platforms,
        config: { user: `${NONROOT}:${NONROOT}`, entrypoint: [`/usr/local/bin/${command}`], env: [PATH_ENV] },
        components: [],
        goBinaries: [bins.amd64],
      };
    },
  };
}

/** esbuild's bundle of one entry with the options of infra/images (ES module, Node 22, require/__dirname banner). */
async function bundle(entry: string, outName: string): Promise<{ dir: string; metafile: esbuild.Metafile }> {
  const dir = join(CACHE, 'inputs/bundles', outName);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  const result = await esbuild.build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    legalComments: 'external',
    outfile: join(dir, 'lib', `${outName}.mjs`),
    banner: {
      js: "import{createRequire as __cr}from'node:module';import{fileURLToPath as __fu}from'node:url';import{dirname as __dn}from'node:path';const require=__cr(import.meta.url),__filename=__fu(import.meta.url),__dirname=__dn(__filename);",
    },
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  for (const out of result.outputFiles) writeIfChanged(out.path, Buffer.from(out.contents));
  return { dir, metafile: result.metafile };
}

/** The npm packages esbuild put into a bundle: every input under node_modules, named by its package.json. */
export function bundledPackages(metafile: esbuild.Metafile): SbomComponent[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(m[1]);
  }
  const byPurl = new Map<string, SbomComponent>();
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: unknown;
    };
    const purl = `pkg:npm/${pkg.name.replace(/^@/, '%40')}@${pkg.version}`;
    byPurl.set(purl, {
      type: 'library',
      name: pkg.name,
      version: pkg.version,
      purl,
      ...(typeof pkg.license === 'string' ? { license: pkg.license } : {}),
    });
  }
  return [...byPurl.values()].sort((a, b) => a.purl.localeCompare(b.purl));
}

const NODE_LIBS = ['libc6', 'libgcc-s1', 'libstdc++6'];

/** A Node program: the distroless-like base, glibc and the C++ runtime from pinned .debs, Node, the bundle. */
function nodeImage(opts: {
  name: string;
  ref: string;
  extraRefs: string[];
  entry: string;
  extra?: (dir: string) => Entry[];
  exposedPorts?: string[];
}): ImageDef {
  return {
    name: opts.name,
    ref: opts.ref,
    extraRefs: opts.extraRefs,
    version: PACKAGE.version,
    async prepare(pins) {
      const built = await bundle(opts.entry, opts.name);
      const app: Entry[] = [...tree(join(built.dir, 'lib'), 'app/lib'), ...(opts.extra?.(built.dir) ?? [])];
      const components: SbomComponent[] = [
        {
          type: 'application',
          name: PACKAGE.name,
          version: PACKAGE.version,
          purl: `pkg:npm/${PACKAGE.name}@${PACKAGE.version}`,
          license: 'Apache-2.0',
          comment: opts.entry,
        },
        ...bundledPackages(built.metafile),
      ];
      const platforms: Prepared['platforms'] = [];
      for (const arch of ARCHES) {
        const libs: Entry[] = [];
        for (const name of NODE_LIBS) {
          const deb = await debRoot(pins, name, arch);
          libs.push(...tree(deb.dir, '', (rel) => debRuntimeFiles(rel, name)));
          components.push(debComponent(name, deb.pin.version, arch));
        }
        const node = nodeRuntime(pins, arch);
        components.push({
          type: 'application',
          name: node.name,
          version: pins.node.version,
          purl: `pkg:npm/${node.name}@${pins.node.version}`,
          license: 'MIT',
          comment: 'the Node.js runtime',
        });
        platforms.push({
          arch,
          layers: [
            baseLayer(),
            { createdBy: `Debian 12 ${NODE_LIBS.join(', ')} (tools/images/pins.json)`, entries: libs },
            {
              createdBy: `Node.js ${pins.node.version} (npm ${node.name})`,
              entries: [file('nodejs/bin/node', node.binary, true), file('nodejs/LICENSE', node.license)],
            },
            { createdBy: `${opts.entry} bundled by esbuild`, entries: app },
          ],
        });
      }
      return {
        platforms,
        config: {
          user: `${NONROOT}:${NONROOT}`,
          entrypoint: ['/nodejs/bin/node', `/app/lib/${opts.name}.mjs`],
          env: [PATH_ENV, 'NODE_ENV=production'],
          workingDir: '/app',
          ...(opts.exposedPorts ? { exposedPorts: opts.exposedPorts } : {}),
        },
        components,
        goBinaries: [],
      };
    },
  };
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** Every image, the pause image first (the node's sandbox image). */
export function catalog(): ImageDef[] {
  const bundles = Object.values(DEFAULT_BUNDLES);
  const apiServers = unique(bundles.map((b) => b.apiServer));
  const etcds = unique(bundles.map((b) => b.etcd));
  const [agentTag, ...agentTags] = unique(bundles.map((b) => b.agent));
  const images: ImageDef[] = [pause()];
  for (const v of apiServers) {
    const binary = (LOCAL_RELEASES['kube-apiserver'] as Record<string, string>)[v];
    if (!binary)
      throw new Error(
        `core/poolspirit/defaults.ts: kube-apiserver ${v} has no local build (dev/local/kube-bins LOCAL_RELEASES)`,
      );
    images.push(goImage(`kube-apiserver-${v}`, `${DEFAULT_IMAGES.apiServer}:${v}`, v, binary));
  }
  for (const tag of etcds) {
    const binary = (LOCAL_RELEASES.etcd as Record<string, string>)[tag.replace(/-\d+$/, '')];
    if (!binary)
      throw new Error(
        `core/poolspirit/defaults.ts: etcd ${tag} has no local build (dev/local/kube-bins LOCAL_RELEASES)`,
      );
    images.push(goImage(`etcd-${tag}`, `${DEFAULT_IMAGES.etcd}:${tag}`, tag, binary));
  }
  const etcdProto = join(ROOT, 'node_modules/etcd3/proto');
  images.push(
    nodeImage({
      name: 'agent',
      ref: `${DEFAULT_IMAGES.agent}:${agentTag}`,
      extraRefs: agentTags.map((t) => `${DEFAULT_IMAGES.agent}:${t}`),
      entry: 'agent/main.ts',
      // etcd3 reads its gRPC definitions at load time from <its lib>/../proto: bundled, /app/lib/../proto.
      extra: () => {
        if (!existsSync(etcdProto)) throw new Error(`${etcdProto}: missing (npm ci installs etcd3)`);
        return tree(etcdProto, 'app/proto');
      },
    }),
    nodeImage({
      name: 'forwarder',
      ref: `${FORWARDER_REPOSITORY}:${PACKAGE.version}`,
      extraRefs: [],
      entry: 'infra/images/forwarder-main.ts',
      exposedPorts: ['9090/tcp'],
    }),
  );
  return images;
}

/** infra/cluster/kustomization.yaml names the forwarder `pool-spirit/forwarder` (Docker Hub's form of it). */
export const FORWARDER_REPOSITORY = 'docker.io/pool-spirit/forwarder';

export const imageDir = (name: string): string => join(CACHE, name);
