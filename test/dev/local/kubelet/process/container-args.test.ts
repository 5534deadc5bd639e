import { describe, expect, it } from 'vitest';
import { translateContainerArgs } from '../../../../../dev/local/kubelet/process/container-args.ts';

const layout = {
  mounts: { '/etc/kubernetes/pki': '/tmp/p/pki', '/var/lib/etcd': '/dev/shm/e' },
  ports: { 10270: 41001, 12379: 41002, 12380: 41003 },
};

describe('translateContainerArgs', () => {
  it('moves mounted paths and pod ports, and says what it changed', () => {
    const out = translateContainerArgs(
      [
        '--secure-port=10270',
        '--etcd-servers=https://127.0.0.1:12379',
        '--tls-cert-file=/etc/kubernetes/pki/apiserver.crt',
        '--data-dir=/var/lib/etcd/data',
        '--initial-cluster=poolspirit=https://127.0.0.1:12380',
        '--profiling=false',
      ],
      layout,
    );
    expect(out.args).toEqual([
      '--secure-port=41001',
      '--etcd-servers=https://127.0.0.1:41002',
      '--tls-cert-file=/tmp/p/pki/apiserver.crt',
      '--data-dir=/dev/shm/e/data',
      '--initial-cluster=poolspirit=https://127.0.0.1:41003',
      '--profiling=false',
    ]);
    expect(out.translations.map((t) => t.flag)).toEqual([
      'secure-port',
      'etcd-servers',
      'tls-cert-file',
      'data-dir',
      'initial-cluster',
    ]);
  });

  it('leaves every other value alone: unknown ports, paths outside mounts, numbers that are not ports, bare words', () => {
    const args = [
      '--quota-backend-bytes=536870912',
      '--service-cluster-ip-range=10.96.0.0/12',
      '--audit-log-path=/var/log/audit.log',
      '--etcd-servers=https://127.0.0.1:2379',
      '--v',
      'positional',
    ];
    const out = translateContainerArgs(args, layout);
    expect(out.args).toEqual(args);
    expect(out.translations).toEqual([]);
  });

  it('translates each item of a comma list, and a nested mount before its parent', () => {
    const out = translateContainerArgs(
      ['--etcd-servers=https://127.0.0.1:12379,https://127.0.0.1:12380', '--x=/var/lib/etcd/data/member'],
      {
        mounts: { '/var/lib/etcd': '/a', '/var/lib/etcd/data': '/b' },
        ports: layout.ports,
      },
    );
    expect(out.args).toEqual(['--etcd-servers=https://127.0.0.1:41002,https://127.0.0.1:41003', '--x=/b/member']);
  });
});
