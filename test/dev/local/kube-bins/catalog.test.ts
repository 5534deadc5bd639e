import { describe, expect, it } from 'vitest';
import { DEFAULT_BUNDLES, DEFAULT_IMAGES } from '../../../../core/poolspirit/defaults.ts';
import { binaryForImage, kubeBinaryPath } from '../../../../dev/local/kube-bins/index.ts';

describe('local builds of the bundles', () => {
  it('every bundle names a kube-apiserver and an etcd release that a local build realises', () => {
    for (const [bundle, v] of Object.entries(DEFAULT_BUNDLES)) {
      expect(
        () => binaryForImage('kube-apiserver', `${DEFAULT_IMAGES.apiServer}:${v.apiServer}`),
        bundle,
      ).not.toThrow();
      expect(() => binaryForImage('etcd', `${DEFAULT_IMAGES.etcd}:${v.etcd}`), bundle).not.toThrow();
    }
    expect(binaryForImage('kube-apiserver', 'registry.k8s.io/kube-apiserver:v1.37.2')).toBe('kube-apiserver-v1.37.2');
    expect(binaryForImage('etcd', 'registry.k8s.io/etcd:3.6.16-0')).toBe('etcd');
  });

  it('an image of a release with no local build is a clear error naming the release and what exists', () => {
    expect(() => binaryForImage('kube-apiserver', 'registry.k8s.io/kube-apiserver:v1.30.14')).toThrow(
      'no local build of kube-apiserver v1.30.14 (image registry.k8s.io/kube-apiserver:v1.30.14); built releases: v1.36.3, v1.37.2',
    );
  });

  it('an environment variable of the binary name points at another build', () => {
    process.env.KUBE_APISERVER_V1_37_2 = '/opt/other/kube-apiserver';
    try {
      expect(kubeBinaryPath('kube-apiserver-v1.37.2')).toBe('/opt/other/kube-apiserver');
    } finally {
      delete process.env.KUBE_APISERVER_V1_37_2;
    }
  });
});
