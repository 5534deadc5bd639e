/**
 * What a status write costs the local API: CPU per PUT to /status of a rendered pool-spirit Deployment
 * (~15 KB with its managed fields, as the sim kubelet writes 4–5 a pool), against a floor measured in the
 * same run and process: CPU per PUT of a ~1 KB ConfigMap, the object of the write floor (dev/bench/local-api.ts).
 * Client and server share this one thread, so each figure is both sides of a write; the two kinds of run
 * are interleaved and medians reported.
 * `npm run bench -- status-writes [--writes 500] [--runs 7]` (dev/bench/HISTORY.md, "Status writes skip what
 * they share with the stored object").
 */
import { parseArgs } from 'node:util';
import { HttpMethod } from '@kubernetes/client-node';
import { intFlag } from '../../cli/command.ts';
import { type KubeObject, renderPoolSpirit } from '../../core/index.ts';
import { renderInput } from '../../test/core/fixtures.ts';
import { startTestCluster } from '../../test/support/local-cluster.ts';
import { median, round } from './lib/stats.ts';

/** CPU microseconds per call of `write`, over `count` sequential calls. */
async function cpuPerWrite(count: number, write: (i: number) => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await write(i);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: { writes: { type: 'string', default: '500' }, runs: { type: 'string', default: '7' } },
  });
  const writes = intFlag('writes', values.writes, 1, 100_000);
  const runs = intFlag('runs', values.runs, 1, 50);

  const rendered = await renderPoolSpirit(await renderInput());
  const deployment = structuredClone(rendered.objects.find((o) => o.kind === 'Deployment')) as KubeObject;
  // Its owner, the PoolSpirit, is not created here: the local API's garbage collector would take it away.
  delete deployment.metadata.ownerReferences;
  const namespace = deployment.metadata.namespace!;
  const t = await startTestCluster({ crds: false });
  try {
    await t.api.createJson({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    const deploymentsPath = `/apis/apps/v1/namespaces/${namespace}/deployments`;
    let stored = await t.api.requestJson<KubeObject>(HttpMethod.POST, deploymentsPath, { body: deployment });
    const statusPath = `${deploymentsPath}/${deployment.metadata.name}/status`;
    let configMap = await t.api.createJson({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'floor', namespace },
      data: { payload: 'x'.repeat(1024) },
    });
    const configMapPath = `/api/v1/namespaces/${namespace}/configmaps/floor`;

    const statusWrite = async (i: number) => {
      // As the sim kubelet reports a pod going ready and back: the status alone changes.
      const status = {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: i % 2,
        availableReplicas: i % 2,
      };
      stored = await t.api.requestJson<KubeObject>(HttpMethod.PUT, statusPath, {
        body: { ...stored, status },
        query: { fieldManager: 'bench-kubelet' },
      });
    };
    const floorWrite = async (i: number) => {
      configMap = await t.api.requestJson<typeof configMap>(HttpMethod.PUT, configMapPath, {
        body: { ...configMap, data: { payload: `${i}`.padEnd(1024, 'x') } },
      });
    };

    const deploymentBytes = JSON.stringify(stored).length;
    const floor: number[] = [];
    const status: number[] = [];
    // One round of each first, not reported: the floor of dev/bench/local-api.ts rises over its first runs.
    await cpuPerWrite(writes, floorWrite);
    await cpuPerWrite(writes, statusWrite);
    for (let r = 0; r < runs; r++) {
      process.stderr.write(`[status-writes] run ${r + 1}/${runs}, ${writes} writes of each\n`);
      floor.push(await cpuPerWrite(writes, floorWrite));
      status.push(await cpuPerWrite(writes, statusWrite));
    }
    return {
      benchmark: 'status-writes',
      writes,
      runs,
      /** The Deployment as stored, with its managed fields: what each status write carries and gets back. */
      deploymentBytes,
      /** CPU µs per PUT of a ~1 KB ConfigMap (client and server), median of the runs. */
      floorCpuUsPerWrite: round(median(floor), 1),
      /** CPU µs per PUT /status of the rendered Deployment (client and server), median of the runs. */
      statusCpuUsPerWrite: round(median(status), 1),
      /** Each run's status write against the floor taken just before it, median of the runs. */
      statusVsFloor: round(median(status.map((s, i) => s / floor[i]!)), 3),
      samples: { floor: floor.map((v) => round(v, 1)), status: status.map((v) => round(v, 1)) },
    };
  } finally {
    await t.stop();
  }
}
