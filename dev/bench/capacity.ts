/**
 * The full capacity probe: 500 Nodes + 1,000 Pods of ~8 KB, 500 leader-election contenders at
 * YurtHub's real durations, a 120 s patch storm with the product's and upstream's etcd settings. Prints
 * the probe's JSON report plus a floor measured in the same run: raw etcd put throughput of the same
 * objects at the same concurrency (no apiserver), so the API's write figures read against etcd's own.
 *
 *   npm run bench -- capacity [--nodes N] [--pods N] [--object-bytes B] [--contenders N] [--patch-storm S]
 *                             [--time-scale X] [--kills N] [--etcd-flag NAME=VALUE ...]
 */

import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { DEFAULT_CAPACITY_OPTIONS, formatCapacityReport, runCapacityProbe } from '../../probe/capacity/index.ts';
import { nodeObject } from '../../probe/capacity/objects.ts';
import { startPoolSpiritTarget } from '../local/capacity/pool-spirit-target.ts';
import { round } from './lib/stats.ts';

const log = (line: string) => process.stderr.write(`capacity: ${line}\n`);

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      nodes: { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.nodes) },
      pods: { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.pods) },
      'object-bytes': { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.objectBytes) },
      contenders: { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.contenders) },
      'patch-storm': { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.patchStormSeconds) },
      'time-scale': { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.timeScale) },
      kills: { type: 'string', default: String(DEFAULT_CAPACITY_OPTIONS.kills) },
      'etcd-flag': { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stderr.write(
      'npm run bench -- capacity [--nodes 500] [--pods 1000] [--object-bytes 8192] [--contenders 500] [--patch-storm 120] [--time-scale 1] [--kills 10]\n',
    );
    return { help: true };
  }
  const options = {
    ...DEFAULT_CAPACITY_OPTIONS,
    target: { kind: 'local' as const, start: startPoolSpiritTarget },
    nodes: Number(values.nodes),
    pods: Number(values.pods),
    objectBytes: Number(values['object-bytes']),
    contenders: Number(values.contenders),
    patchStormSeconds: Number(values['patch-storm']),
    timeScale: Number(values['time-scale']),
    kills: Number(values.kills),
    productEtcdOverrides: Object.fromEntries(
      (values['etcd-flag'] ?? []).map((f) => {
        const at = f.indexOf('=');
        if (at < 1) throw new TypeError(`--etcd-flag must be NAME=VALUE, got "${f}"`);
        return [f.slice(0, at).replace(/^--/, ''), f.slice(at + 1)];
      }),
    ),
    log,
  };
  log('floor: raw etcd puts of the same objects at the same concurrency');
  const floor = await etcdPutFloor(options.nodes + options.pods, options.objectBytes, options.concurrency);
  const report = await runCapacityProbe(options);
  process.stderr.write(formatCapacityReport(report));
  return {
    floor,
    apiWriteShareOfEtcdFloor: round(report.load.write.perSecond / floor.putsPerSecond, 3),
    report,
  };
}

async function etcdPutFloor(count: number, objectBytes: number, concurrency: number) {
  const { startEtcd, flagArgs } = await import('../local/etcd/launch.ts');
  const { createEtcdClient } = await import('../local/etcd/client.ts');
  const { productEtcdSettings } = await import('../../probe/capacity/etcd-settings.ts');
  const etcd = await startEtcd({ extraArgs: flagArgs(productEtcdSettings().flags) });
  const client = createEtcdClient([etcd.endpoint]);
  try {
    const value = JSON.stringify(nodeObject(0, objectBytes));
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const i = next++;
          await client.put(`/registry/minions/floor-${i}`).value(value);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return { puts: count, concurrency, putsPerSecond: round(count / seconds, 1) };
  } finally {
    client.close();
    await etcd.stop();
  }
}
