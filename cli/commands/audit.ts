import { writeFile } from 'node:fs/promises';
import type { FleetReport } from '../../core/audit/index.ts';
import { describeOpenYurt } from '../../core/nodepool-versions.ts';
import type { EventSender } from '../../functions/common/send-events.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../command.ts';
import { openStateTable, STATE_TABLE_DETAILS, stateTableFlags } from './state-table-flags.ts';

/** The local stack's event bus (serverless.yml's EventBus, stage dev). */
export const DEFAULT_LOCAL_EVENT_BUS = 'pool-spirit-reconciler-dev';

const HEALTH_WORD = { healthy: 'healthy', degraded: 'DEGRADED', critical: 'CRITICAL', unknown: 'not audited' } as const;

/** The report for a terminal: one line per cluster, then the findings. */
export function reportText(report: FleetReport): string {
  const s = report.summary;
  const lines = [
    `fleet: ${s.clusters} cluster(s), ${s.pools} pool(s): ${s.healthyPools} healthy, ${s.degradedPools} degraded, ${s.criticalPools} critical`,
    `findings: ${s.findings.critical} critical, ${s.findings.warning} warning, ${s.findings.info} info; ${s.reconcilesRequested} reconcile(s) requested`,
    '',
  ];
  const rows = report.clusters.map((c) => [
    c.id,
    HEALTH_WORD[c.health],
    `${c.pools.filter((p) => p.health === 'healthy').length}/${c.pools.length}`,
    String(c.findings.length),
    c.openYurt ? describeOpenYurt(c.openYurt) : '-',
    c.auditedAt ?? '-',
  ]);
  const header = ['CLUSTER', 'HEALTH', 'HEALTHY POOLS', 'FINDINGS', 'OPENYURT', 'AUDITED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  lines.push(line(header), ...rows.map(line));
  for (const c of report.clusters) {
    if (!c.findings.length) continue;
    lines.push('', `${c.id}:`);
    for (const f of c.findings) {
      const fix = f.fixable ? (c.requested.includes(f.pool) ? ' [reconcile requested]' : ' [fixable]') : '';
      lines.push(
        `  ${f.severity.toUpperCase().padEnd(8)} ${f.kind.padEnd(22)} ${(f.pool || '-').padEnd(16)} ${f.reason}${fix}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export const auditCommand: Command = {
  path: ['audit'],
  summary: 'audit registered clusters now and print the fleet report',
  options: {
    cluster: {
      type: 'string',
      multiple: true,
      valueName: 'ID',
      description: 'audit only this cluster (repeatable); default every registered one',
    },
    json: { type: 'boolean', description: 'print the fleet report as JSON' },
    html: { type: 'string', valueName: 'FILE', description: 'also write the report as one self-contained HTML page' },
    'report-only': { type: 'boolean', description: 'do not audit now: report the latest stored audits' },
    'bus-endpoint': {
      type: 'string',
      valueName: 'URL',
      description: 'send reconcile requests for fixable findings to this local bus (env SPIRITCTL_BUS_ENDPOINT)',
    },
    'event-bus': {
      type: 'string',
      valueName: 'NAME',
      description: `bus the reconcile requests go to (env EVENT_BUS_NAME, else ${DEFAULT_LOCAL_EVENT_BUS})`,
    },
    ...stateTableFlags,
  },
  details: `
Runs the same per-cluster audit the scheduled \`audit\` function runs, in this process: reads each cluster
through its registry entry, stores an audit record (kept 30 days), and prints the fleet report built from
the stored records (charts of leader transitions and etcd memory need earlier audits to draw history).

Reconcile requests for fixable findings are sent when a bus is given (--bus-endpoint for the local stack,
or EVENT_BUS_NAME set for the cloud bus); otherwise the report lists them as fixable and nothing is sent.

Examples:
  spiritctl audit --dynamo-endpoint http://127.0.0.1:PORT --bus-endpoint http://127.0.0.1:PORT2
  spiritctl audit --cluster cluster-01 --json
  spiritctl audit --report-only --html fleet.html
${STATE_TABLE_DETAILS}`,
  async run({ values }) {
    const clusterIds = (values.cluster as string[] | undefined) ?? [];
    const busEndpoint = (values['bus-endpoint'] as string | undefined) ?? process.env.SPIRITCTL_BUS_ENDPOINT;
    if (busEndpoint && !/^https?:\/\/[^/]+/.test(busEndpoint))
      throw new UsageError(`--bus-endpoint must be an http(s) URL, got "${busEndpoint}"`);
    const eventBusName =
      (values['event-bus'] as string | undefined) ?? process.env.EVENT_BUS_NAME ?? DEFAULT_LOCAL_EVENT_BUS;
    const { table, close } = await openStateTable(values);
    const { auditDeps, auditNow, fleetReportFromTable } = await import('../../functions/audit/handler.ts');
    const { renderFleetReportHtml } = await import('../../core/audit/index.ts');
    let destroyBus = () => {};
    try {
      let events: EventSender | undefined;
      if (busEndpoint || process.env.EVENT_BUS_NAME) {
        const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
        const { eventBridgePutEvents } = await import('../../adapters/eventbridge/put-events.ts');
        const client = busEndpoint
          ? new EventBridgeClient({
              endpoint: busEndpoint,
              region: 'local',
              credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
            })
          : new EventBridgeClient({});
        destroyBus = () => client.destroy();
        events = eventBridgePutEvents(client);
      }
      const { Logger } = await import('@aws-lambda-powertools/logger');
      // Function logs are for CloudWatch; the CLI shows the report instead.
      const deps = auditDeps({ table, events, eventBusName, logger: new Logger({ logLevel: 'ERROR' }) });
      if (!values['report-only']) {
        try {
          await auditNow(deps, { clusterIds, requestedBy: 'spiritctl' });
        } catch (err) {
          if ((err as Error).message.startsWith('not registered'))
            throw new UsageError(`--cluster: ${(err as Error).message}`);
          throw err;
        }
        if (!events)
          process.stderr.write(
            'note: no bus given (--bus-endpoint or EVENT_BUS_NAME): fixable findings were not sent to reconcile\n',
          );
      }
      const report = await fleetReportFromTable(deps, { clusterIds });
      if (values.html) {
        await writeFile(String(values.html), renderFleetReportHtml(report));
        if (!values.json) process.stderr.write(`HTML report written to ${String(values.html)}\n`);
      }
      process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : reportText(report));
      return 0;
    } finally {
      destroyBus();
      close();
    }
  },
};
