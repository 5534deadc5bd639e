/** `spiritctl probe capacity`: the 500-node / 1k-pod capacity probe against a local or any pool-spirit apiserver. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ProbeTarget } from '../../probe/capacity/index.ts';
import { type Command, intFlag, UsageError } from '../command.ts';
import { openStateTable, STATE_TABLE_DETAILS, stateTableFlags, stateTableRequested } from './state-table-flags.ts';

const TARGET_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function numberFlag(name: string, raw: unknown, min: number, max: number): number {
  const text = String(raw);
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(n >= min && n <= max))
    throw new UsageError(`--${name} must be a number from ${min} to ${max}, got "${text}"`);
  return n;
}

/** `--etcd-flag quota-backend-bytes=1073741824` (repeatable) → `{ 'quota-backend-bytes': '1073741824' }`. */
export function parseEtcdFlags(raw: unknown, local: boolean): Record<string, string> {
  const list = raw === undefined ? [] : (raw as string[]);
  if (list.length && !local)
    throw new UsageError('--etcd-flag needs --local (a remote target runs etcd with its own flags)');
  const out: Record<string, string> = {};
  for (const item of list) {
    const m = /^(?:--)?([a-z][a-z0-9-]*)=(.+)$/.exec(item);
    if (!m) throw new UsageError(`--etcd-flag must be NAME=VALUE such as auto-compaction-retention=10s, got "${item}"`);
    out[m[1]] = m[2];
  }
  return out;
}

/** `--container-env kube-apiserver:GOMEMLIMIT=600MiB` (repeatable) → `{ 'kube-apiserver': { GOMEMLIMIT: '600MiB' } }`. */
export function parseContainerEnv(raw: unknown): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const item of raw === undefined ? [] : (raw as string[])) {
    const m = /^([a-z][a-z0-9-]*):([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(item);
    if (!m)
      throw new UsageError(
        `--container-env must be CONTAINER:NAME=VALUE such as kube-apiserver:GOMEMLIMIT=600MiB, got "${item}"`,
      );
    out[m[1]] = { ...out[m[1]], [m[2]]: m[3] };
  }
  return out;
}

export const probeCapacityCommand: Command = {
  path: ['probe', 'capacity'],
  summary: 'measure etcd memory, write latency and YurtHub leader election of a pool-spirit under load',
  options: {
    local: {
      type: 'boolean',
      description:
        'run the rendered pool-spirit on the built etcd (data in /dev/shm) + kube-apiserver, once with product and once with upstream flags',
    },
    kubelet: {
      type: 'string',
      description:
        'with --local: `process` (default) runs the binaries; `real` runs the pod the reconciler renders on a real node (kubelet, containerd, runc; root) and reads its cgroups',
      valueName: 'process|real',
    },
    'apiserver-flag': {
      type: 'string',
      multiple: true,
      description:
        'with --local: a kube-apiserver flag laid over the rendered ones, e.g. watch-cache=false (repeatable)',
      valueName: 'NAME=VALUE',
    },
    'container-env': {
      type: 'string',
      multiple: true,
      description:
        'with --local --kubelet real: an environment variable for a container, e.g. kube-apiserver:GOGC=50 (repeatable)',
      valueName: 'CONTAINER:NAME=VALUE',
    },
    'idle-seconds': {
      type: 'string',
      description: 'with --kubelet real: seconds to leave the pod alone before the load, for its idle CPU',
      default: '30',
      valueName: 'SECONDS',
    },
    plot: {
      type: 'string',
      description: 'also draw the patch storm over time (memory against limits, db size, write p99) as SVG to FILE',
      valueName: 'FILE',
    },
    verbose: {
      type: 'boolean',
      description: "with --local: also log the pool-spirit's processes and arg translations",
    },
    kubeconfig: {
      type: 'string',
      description: 'probe the apiserver of this kubeconfig instead (its current context)',
      valueName: 'FILE',
    },
    context: { type: 'string', description: 'kubeconfig context to use', valueName: 'NAME' },
    'etcd-metrics': {
      type: 'string',
      description: "with --kubeconfig: etcd's metrics URL (--listen-metrics-urls), for RSS and db size",
      valueName: 'URL',
    },
    nodes: { type: 'string', description: 'Nodes to write', default: '500', valueName: 'N' },
    pods: { type: 'string', description: 'Pods to write', default: '1000', valueName: 'N' },
    'object-bytes': {
      type: 'string',
      description: 'JSON size of each Node and Pod',
      default: '8192',
      valueName: 'BYTES',
    },
    concurrency: { type: 'string', description: 'concurrent writers while loading', default: '16', valueName: 'N' },
    contenders: {
      type: 'string',
      description: 'YurtHub-like leader-election contenders (identity node-<i>)',
      default: '500',
      valueName: 'N',
    },
    kills: {
      type: 'string',
      description: 'times the leader is killed (alternating crash and hang)',
      default: '10',
      valueName: 'N',
    },
    'patch-storm': {
      type: 'string',
      description: 'seconds of random read-modify-write updates (per etcd setting)',
      default: '120',
      valueName: 'SECONDS',
    },
    'storm-concurrency': {
      type: 'string',
      description: 'concurrent updaters in the patch storm',
      default: '16',
      valueName: 'N',
    },
    'time-scale': {
      type: 'string',
      description: 'divide the 15 s / 10 s / 2 s election durations by this (quick runs)',
      default: '1',
      valueName: 'X',
    },
    'etcd-flag': {
      type: 'string',
      multiple: true,
      description:
        'with --local: an etcd flag laid over the product settings, e.g. auto-compaction-retention=10s (repeatable)',
      valueName: 'NAME=VALUE',
    },
    'tolerance-percent': {
      type: 'string',
      description: "growth of the storm's last third over its middle third still called bounded",
      default: '10',
      valueName: 'PCT',
    },
    target: {
      type: 'string',
      description: 'name the result is stored under (default: local, or the kubeconfig context)',
      valueName: 'NAME',
    },
    json: { type: 'boolean', description: 'print one JSON document instead of the report' },
    'peaks-out': {
      type: 'string',
      description:
        "with --local: also write the memory peaks (what the containers' limits are checked against) to FILE",
      valueName: 'FILE',
    },
    ...stateTableFlags,
  },
  details: `
--local --kubelet real runs the pod the reconciler renders on a real node (the local stack's real control plane,
kubelet, containerd and runc; root) and reads the pod's cgroups: its idle CPU, its working set (tmpfs included)
against the limits the kernel enforces, and OOM kills. Levers go through the PoolSpirit's spec (extraArgs,
overrides), as a user would set them. It runs the product side only.

--local runs the rendered pool-spirit (default bundle) on the built etcd and kube-apiserver, TLS throughout,
etcd's data in /dev/shm: once with the product's flags, once with upstream etcd flags and no kube-apiserver
memory flags. Each reports kube-apiserver RSS and etcd memory over time and their peaks. etcd memory means
its RSS plus what its data dir holds in tmpfs (an emptyDir with medium Memory is charged to the pod), the
mmapped db file counted once. Against --kubeconfig only what etcd's metrics show is reported (RSS, db
size); tmpfs is then unavailable. A remote probe elects over Lease kube-system/yurthub-capacity-probe,
never YurtHub's own, and deletes what it wrote.

Exit code: 0 when every target is met, 3 when the probe ran but missed one, 1 on error.

Examples:
  spiritctl probe capacity --local --nodes 20 --pods 40 --contenders 10 --patch-storm 5 --time-scale 10
  spiritctl probe capacity --local --json --peaks-out probe/capacity/measured-peaks.json > capacity.json
  sudo spiritctl probe capacity --local --kubelet real --patch-storm 600 --plot storm.svg --json > node.json
  sudo spiritctl probe capacity --local --kubelet real --container-env kube-apiserver:GOMEMLIMIT=500MiB
  spiritctl probe capacity --kubeconfig pool.kubeconfig --etcd-metrics http://10.0.0.5:12381${STATE_TABLE_DETAILS}`,

  async run({ values }) {
    const local = values.local === true;
    if (local === (values.kubeconfig !== undefined))
      throw new UsageError('give exactly one of --local or --kubeconfig FILE');
    if (local && (values.context !== undefined || values['etcd-metrics'] !== undefined)) {
      throw new UsageError('--context and --etcd-metrics go with --kubeconfig, not --local');
    }
    const etcdMetricsUrl = values['etcd-metrics'] === undefined ? undefined : String(values['etcd-metrics']);
    if (etcdMetricsUrl !== undefined && !/^https?:\/\/[^/\s]+/.test(etcdMetricsUrl))
      throw new UsageError(`--etcd-metrics must be an http(s) URL, got "${etcdMetricsUrl}"`);
    const file = local ? undefined : resolve(String(values.kubeconfig));
    const context = values.context === undefined ? undefined : String(values.context);
    const derived = (local ? 'local' : (context ?? 'kubeconfig'))
      .toLowerCase()
      .replace(/[^-a-z0-9.]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
    const targetName = values.target === undefined ? derived || 'kubeconfig' : String(values.target);
    if (!TARGET_NAME.test(targetName))
      throw new UsageError(`--target must be a lowercase DNS name, got "${targetName}"`);

    const productEtcdOverrides = parseEtcdFlags(values['etcd-flag'], local);
    const kubelet = values.kubelet === undefined ? 'process' : String(values.kubelet);
    if (kubelet !== 'process' && kubelet !== 'real')
      throw new UsageError(`--kubelet must be process or real, got "${kubelet}"`);
    if (values.kubelet !== undefined && !local) throw new UsageError('--kubelet goes with --local');
    const productApiServerFlags = parseEtcdFlags(values['apiserver-flag'], local);
    const productContainerEnv = parseContainerEnv(values['container-env']);
    if (Object.keys(productContainerEnv).length && kubelet !== 'real')
      throw new UsageError('--container-env needs --local --kubelet real (it goes through the PoolSpirit spec)');
    const plotOut = values.plot === undefined ? undefined : resolve(String(values.plot));
    const peaksOut = values['peaks-out'] === undefined ? undefined : resolve(String(values['peaks-out']));
    if (peaksOut && !local)
      throw new UsageError('--peaks-out needs --local (only a local run measures the containers)');
    const { DEFAULT_CAPACITY_OPTIONS, runCapacityProbe, formatCapacityReport } = await import(
      '../../probe/capacity/index.ts'
    );
    const target: ProbeTarget =
      file === undefined
        ? {
            kind: 'local',
            start:
              kubelet === 'real'
                ? (await import('../../dev/local/capacity/real-node-target.ts')).startRealNodePoolSpiritTarget
                : (await import('../../dev/local/capacity/pool-spirit-target.ts')).startPoolSpiritTarget,
          }
        : { kind: 'kubeconfig', file, context, etcdMetricsUrl };
    const options = {
      ...DEFAULT_CAPACITY_OPTIONS,
      target,
      nodes: intFlag('nodes', values.nodes, 1, 100_000),
      pods: intFlag('pods', values.pods, 0, 100_000),
      objectBytes: intFlag('object-bytes', values['object-bytes'], 512, 1_000_000),
      concurrency: intFlag('concurrency', values.concurrency, 1, 1024),
      contenders: intFlag('contenders', values.contenders, 1, 10_000),
      kills: intFlag('kills', values.kills, 0, 1000),
      patchStormSeconds: numberFlag('patch-storm', values['patch-storm'], 1, 86_400),
      stormConcurrency: intFlag('storm-concurrency', values['storm-concurrency'], 1, 1024),
      timeScale: numberFlag('time-scale', values['time-scale'], 0.01, 1000),
      tolerance: numberFlag('tolerance-percent', values['tolerance-percent'], 0, 1000) / 100,
      productEtcdOverrides,
      productApiServerFlags,
      productContainerEnv,
      compareUpstream: kubelet !== 'real',
      idleSeconds: numberFlag('idle-seconds', values['idle-seconds'], 0, 3600),
      verbose: values.verbose === true,
      log: (line: string) => process.stderr.write(`probe: ${line}\n`),
    };
    // Stored only when a table is named: a one-off probe against a kubeconfig needs no state table.
    const stored = stateTableRequested(values) ? await openStateTable(values, { createIfLocal: true }) : undefined;
    try {
      const report = await runCapacityProbe(options);
      if (stored) {
        const { recordCapacityProbe } = await import('../../adapters/state-table/probe-records.ts');
        const { reportForStorage } = await import('../../probe/capacity/stored-report.ts');
        const fitted = reportForStorage(report);
        await recordCapacityProbe(stored.table, targetName, fitted.report, new Date());
        const thinned = fitted.samples
          ? ` (storm samples: every ${fitted.samples.every}th kept, ${fitted.samples.kept} of ${fitted.samples.taken}, to fit one item)`
          : '';
        process.stderr.write(`probe: stored as capacity probe ${targetName} in table ${stored.tableName}${thinned}\n`);
      }
      if (peaksOut) {
        const { peaksRecord } = await import('../../probe/capacity/peaks.ts');
        await writeFile(peaksOut, `${JSON.stringify(peaksRecord(report), null, 2)}\n`);
        process.stderr.write(`probe: memory peaks written to ${peaksOut}\n`);
      }
      if (plotOut) {
        const { stormSvg } = await import('../../probe/capacity/plot.ts');
        const side = report.patchStorm.product ?? report.patchStorm.target;
        if (side) {
          const where = report.target.runsOn?.kind === 'real-node' ? 'pod on a real node' : report.target.kind;
          const title = `Patch storm, ${where}: ${side.storm.updatesPerSecond} updates/s, ${report.parameters.nodes} Nodes + ${report.parameters.pods} Pods`;
          await writeFile(plotOut, stormSvg(title, side.storm.samples));
          process.stderr.write(`probe: storm plot written to ${plotOut}\n`);
        }
      }
      process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatCapacityReport(report));
      return report.verdict.pass ? 0 : 3;
    } finally {
      stored?.close();
    }
  },
};
