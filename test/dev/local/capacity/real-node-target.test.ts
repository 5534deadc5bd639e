import { describe, expect, it } from 'vitest';
import { envOverrides, specLevers } from '../../../../dev/local/capacity/real-node-target.ts';
import { productEtcdSettings } from '../../../../probe/capacity/etcd-settings.ts';
import type { PoolSpiritTargetOptions } from '../../../../probe/capacity/pool-spirit-target.ts';

const containers = [{ name: 'kube-apiserver' }, { name: 'etcd' }, { name: 'agent', env: [{ name: 'POOL_NAME' }] }];
const options = (o: Partial<PoolSpiritTargetOptions> = {}): PoolSpiritTargetOptions => ({
  etcd: productEtcdSettings(),
  apiServer: 'product',
  ...o,
});

describe("the real-node target's levers, set through the PoolSpirit spec", () => {
  it('sets nothing for the rendered defaults', () => {
    expect(specLevers(options(), containers)).toEqual({});
  });

  it('puts apiserver flags and only the etcd flags that differ from the rendered ones into extraArgs', () => {
    const etcd = productEtcdSettings();
    const spec = specLevers(
      options({
        etcd: { ...etcd, flags: { ...etcd.flags, 'snapshot-count': '2000' } },
        apiServerFlags: { 'watch-cache': 'false' },
      }),
      containers,
    );
    expect(spec).toEqual({
      apiServer: { extraArgs: { 'watch-cache': 'false' } },
      etcd: { extraArgs: { 'snapshot-count': '2000' } },
    });
  });

  it('adds environment by JSON patch: the whole list where the container has none, appended where it has one', () => {
    expect(
      envOverrides({ 'kube-apiserver': { GOMEMLIMIT: '500MiB', GOGC: '50' }, agent: { X: '1' } }, containers),
    ).toEqual([
      {
        op: 'add',
        path: '/spec/template/spec/containers/0/env',
        value: [
          { name: 'GOMEMLIMIT', value: '500MiB' },
          { name: 'GOGC', value: '50' },
        ],
      },
      { op: 'add', path: '/spec/template/spec/containers/2/env/-', value: { name: 'X', value: '1' } },
    ]);
  });

  it('names the containers there are when asked for one the pod does not have', () => {
    expect(() => envOverrides({ etcdproxy: { A: '1' } }, containers)).toThrow(
      'containerEnv: no container "etcdproxy" (the pod has kube-apiserver, etcd, agent)',
    );
  });
});
