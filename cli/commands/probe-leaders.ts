/** `spiritctl probe leaders`: the latest leader-election classification of every pool, from the state table. */
import { type Command, UsageError } from '../command.ts';
import { openStateTable, STATE_TABLE_DETAILS, stateTableFlags } from './state-table-flags.ts';

const CLUSTER_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const probeLeadersCommand: Command = {
  path: ['probe', 'leaders'],
  summary: "print each pool's latest YurtHub leader-election probe (healthy, no-leader, stale, flapping)",
  options: {
    cluster: {
      type: 'string',
      description: 'only this registered cluster (default: every registered cluster)',
      valueName: 'ID',
    },
    json: { type: 'boolean', description: 'print one JSON document' },
    ...stateTableFlags,
  },
  details: `
Reads what the probe function stored; it does not contact any cluster. The probe writes a pool when what it
sees changes (holder, transitions, state) and once a day otherwise: SINCE is the pool's last write (its REASON
is as of then), PROBED the cluster's last probe. For the local stack pass its
table, e.g. --dynamo-endpoint http://127.0.0.1:PORT --table pool-spirit-local-state.
Exit code 0 when every pool is healthy, 3 when any is not.${STATE_TABLE_DETAILS}`,

  async run({ values }) {
    const cluster = values.cluster === undefined ? undefined : String(values.cluster);
    if (cluster !== undefined && !CLUSTER_ID.test(cluster))
      throw new UsageError(`--cluster must be a registered cluster id (a DNS label), got "${cluster}"`);
    const stored = await openStateTable(values);
    try {
      const { latestLeaderProbes, latestProbeRun } = await import('../../adapters/state-table/probe-records.ts');
      const { listClusters } = await import('../../adapters/state-table/registry.ts');
      const now = new Date();
      const ids = cluster ? [cluster] : (await listClusters(stored.table)).map((c) => c.id);
      const [records, runs] = await Promise.all([
        Promise.all(ids.map((id) => latestLeaderProbes(stored.table, id, now))).then((all) => all.flat()),
        Promise.all(ids.map((id) => latestProbeRun(stored.table, id, now))),
      ]);
      const probedAt = new Map(runs.flatMap((r) => (r ? [[r.clusterId, r.probedAt] as const] : [])));
      if (values.json) {
        const json = { clusters: ids, runs: runs.filter((r) => r !== undefined), pools: records };
        process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
      } else if (records.length === 0) {
        process.stdout.write(`no leader probes recorded${cluster ? ` for cluster ${cluster}` : ''} yet\n`);
      } else {
        // A pool is written when its state changes: SINCE is that change, PROBED the cluster's last look.
        const rows = records.map((r) => {
          const probed = probedAt.get(r.clusterId);
          return [
            r.clusterId,
            r.nodePool,
            r.classification.state,
            r.observation.holder ?? '–',
            ago(now, r.observation.observedAt),
            probed ? ago(now, probed) : '–',
            String(r.classification.transitionsLastHour),
            r.classification.reason,
          ];
        });
        const header = ['CLUSTER', 'POOL', 'STATE', 'LEADER', 'SINCE', 'PROBED', 'TRANSITIONS/H', 'REASON'];
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
        for (const row of [header, ...rows]) {
          process.stdout.write(`${row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  ')}\n`);
        }
      }
      return records.every((r) => r.classification.state === 'healthy') ? 0 : 3;
    } finally {
      stored.close();
    }
  },
};

function ago(now: Date, iso: string): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
}
