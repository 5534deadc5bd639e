import type { ForwarderStats } from './forwarder.ts';

/** The forwarder's lag and counters in Prometheus text format (for /metrics). */
export function prometheusText(clusterId: string, s: ForwarderStats): string {
  const label = `cluster="${clusterId.replace(/"/g, '')}"`;
  const lines: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number, extra = '') => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${label}${extra}} ${value}`);
  };
  metric(
    'poolspirit_forwarder_lag_seconds',
    'gauge',
    'Age of the oldest notice the bus has not accepted yet.',
    s.sender.oldestPendingAgeMs / 1000,
  );
  metric(
    'poolspirit_forwarder_notices_received_total',
    'counter',
    'Change notices taken from watches.',
    s.sender.received,
  );
  metric(
    'poolspirit_forwarder_notices_coalesced_total',
    'counter',
    'Notices merged into a newer one for the same key.',
    s.sender.coalesced,
  );
  metric('poolspirit_forwarder_notices_sent_total', 'counter', 'Notices accepted by the bus.', s.sender.sent);
  metric(
    'poolspirit_forwarder_failed_entry_attempts_total',
    'counter',
    'Entry attempts the bus reported failed (retryable ones were re-sent).',
    s.sender.failedEntryAttempts,
  );
  metric(
    'poolspirit_forwarder_rejected_entries_total',
    'counter',
    'Entries the bus refused with a non-retryable error (reported, not re-sent).',
    s.sender.rejected,
  );
  metric(
    'poolspirit_forwarder_failed_calls_total',
    'counter',
    'PutEvents calls that failed as a whole (retried).',
    s.sender.failedCalls,
  );
  metric('poolspirit_forwarder_pending_keys', 'gauge', 'Keys held, waiting to be sent.', s.sender.pendingKeys);
  metric('poolspirit_forwarder_resync_notices_total', 'counter', 'RESYNC notices sent after relists.', s.resyncNotices);
  for (const [kind, inf] of Object.entries(s.informers)) {
    const k = `,kind="${kind}"`;
    lines.push(`poolspirit_forwarder_relists_total{${label}${k}} ${inf.lists}`);
    lines.push(`poolspirit_forwarder_watch_restarts_total{${label}${k}} ${inf.watchesStarted}`);
    lines.push(`poolspirit_forwarder_gone_total{${label}${k}} ${inf.gone410}`);
    lines.push(`poolspirit_forwarder_watch_errors_total{${label}${k}} ${inf.watchErrors}`);
  }
  return `${lines.join('\n')}\n`;
}
