/** How a profile changes the rendered pod: only the flags it names, everything else as rendered. */
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../../probe/capacity/etcd-observer.ts';
import { upstreamEtcdSettings } from '../../../probe/capacity/etcd-settings.ts';
import { memoryFlagsOf, memoryPeaks } from '../../../probe/capacity/peaks.ts';
import {
  APISERVER_MEMORY_FLAGS,
  dropFlags,
  setFlags,
  withProfile,
} from '../../../probe/capacity/pool-spirit-target.ts';
import { renderedPod } from '../../support/real-apiserver.ts';

const args = (pod: { containers: Array<{ name: string; args?: string[] }> }, name: string) =>
  pod.containers.find((c) => c.name === name)!.args!;

describe('pool-spirit profiles', () => {
  it('replaces a flag in place, appends a new one, and drops only the named ones', () => {
    expect(setFlags(['--a=1', '--b=2'], { b: '3', c: '4' })).toEqual(['--a=1', '--b=3', '--c=4']);
    expect(dropFlags(['--a=1', '--ab=2', '--b=3'], ['a', 'b'])).toEqual(['--ab=2']);
  });

  it('upstream: etcd runs the upstream preset and the apiserver loses exactly its memory flags', async () => {
    const { pod } = await renderedPod();
    const rendered = args(pod, 'kube-apiserver');
    expect(memoryFlagsOf(rendered).map((f) => f.slice(2, f.indexOf('=')))).toEqual([...APISERVER_MEMORY_FLAGS]);
    const up = withProfile(pod, upstreamEtcdSettings().flags, 'upstream');
    expect(args(up, 'kube-apiserver')).toEqual(rendered.filter((a) => !memoryFlagsOf(rendered).includes(a)));
    const etcd = args(up, 'etcd');
    expect(etcd).toContain('--snapshot-count=10000');
    expect(etcd).toContain('--quota-backend-bytes=0');
    expect(etcd.filter((a) => a.startsWith('--snapshot-count='))).toHaveLength(1);
    // TLS and the data dir stay as rendered.
    expect(etcd.filter((a) => a.startsWith('--client-cert-auth=') || a.startsWith('--data-dir='))).toEqual(
      args(pod, 'etcd').filter((a) => a.startsWith('--client-cert-auth=') || a.startsWith('--data-dir=')),
    );
    expect(pod.containers.find((c) => c.name === 'agent')).toEqual(up.containers.find((c) => c.name === 'agent'));
  });

  it('product with a candidate: the apiserver flag is laid over the rendered ones', async () => {
    const { pod } = await renderedPod();
    const candidate = withProfile(pod, {}, 'product', { 'watch-cache': 'false' });
    expect(args(candidate, 'kube-apiserver')).toEqual([...args(pod, 'kube-apiserver'), '--watch-cache=false']);
  });
});

describe('memory peaks', () => {
  const snap = (apiRssBytes: number | null, memoryBytes: number | null): EtcdSnapshot => ({
    rssBytes: memoryBytes,
    rssShmemBytes: 0,
    tmpfsBytes: memoryBytes === null ? null : 1,
    memoryBytes,
    dbSizeBytes: 1,
    dbSizeInUseBytes: 1,
    alarms: [],
    revision: 1,
    apiRssBytes,
    pod: null,
  });
  it('takes the highest of every figure, skipping what was not seen, and the first apiserver figure as idle', () => {
    expect(memoryPeaks([snap(10, 5), null, snap(30, null), snap(20, 7)])).toEqual({
      apiServerIdleRssBytes: 10,
      apiServerRssBytes: 30,
      etcdRssBytes: 7,
      etcdTmpfsBytes: 1,
      etcdMemoryBytes: 7,
      pod: null,
      samples: 3,
    });
    expect(memoryPeaks([])).toMatchObject({ apiServerRssBytes: null, samples: 0 });
  });
});
