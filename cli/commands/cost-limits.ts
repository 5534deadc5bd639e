import { adjustedProfile } from '../../core/cost/adjust.ts';
import { MEASURED_PROFILE } from '../../core/cost/measured-profile.ts';
import { scaleLimits } from '../../core/cost/scale.ts';
import { functionSettings } from '../../dev/local/functions/serverless-settings.ts';
import type { Command } from '../command.ts';
import { intFlag, UsageError } from '../command.ts';

const compact = (n: number | null) =>
  n === null ? '—' : n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : Math.round(n).toLocaleString('en-US');

export const costLimitsCommand: Command = {
  path: ['cost', 'limits'],
  summary:
    'where the design reaches a limit first: each quota against a fleet, and the fleet size at which it is reached',
  options: {
    clusters: { type: 'string', default: '500', valueName: 'N', description: 'clusters in the fleet' },
    'pools-per-cluster': { type: 'string', default: '20', valueName: 'M', description: 'edge pools per cluster' },
    accounts: {
      type: 'string',
      default: '1',
      valueName: 'A',
      description: 'AWS accounts whose forwarders send to the central bus',
    },
    'duration-factor': {
      type: 'string',
      default: '1',
      valueName: 'F',
      description: 'multiply the measured function durations (an upper bound: measured on a loaded machine)',
    },
    json: { type: 'boolean', description: 'print the limits as JSON' },
  },
  details: `
Combines the per-pool figures measured on the local fleet (core/cost/measured-profile.ts), the functions'
settings in serverless.yml (reserved concurrency, timeouts, maximumEventAge) and AWS's published quotas
(core/cost/quotas.ts, each with its source). Sorted by the fleet size at which each limit is reached, at the
given pools per cluster. See docs/scale.md.`,
  async run({ values }) {
    const factor = Number(values['duration-factor']);
    if (!Number.isFinite(factor) || factor <= 0)
      throw new UsageError(`--duration-factor must be a number > 0, got "${String(values['duration-factor'])}"`);
    const clusters = intFlag('clusters', values.clusters, 1, 1_000_000);
    const poolsPerCluster = intFlag('pools-per-cluster', values['pools-per-cluster'], 1, 100_000);
    const accounts = intFlag('accounts', values.accounts, 1, 100_000);
    const limits = scaleLimits({
      clusters,
      poolsPerCluster,
      accounts,
      profile: adjustedProfile(MEASURED_PROFILE, { durationFactor: factor }),
      functions: functionSettings(),
    });
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify(
          {
            fleet: { clusters, poolsPerCluster, pools: clusters * poolsPerCluster, accounts },
            durationFactor: factor,
            inputs: MEASURED_PROFILE.measuredBy,
            limits,
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    const lines = [
      `fleet: ${clusters} clusters × ${poolsPerCluster} pools = ${(clusters * poolsPerCluster).toLocaleString('en-US')} pools, ${accounts} account(s); durations × ${factor}`,
      '',
    ];
    lines.push(
      `${'LIMIT'.padEnd(28)} ${'USE'.padStart(7)}  ${'REACHED AT POOLS'.padStart(16)}  ${'CLUSTERS'.padStart(9)}`,
    );
    for (const l of limits) {
      lines.push(
        `${l.id.padEnd(28)} ${`${Math.round(l.utilisation * 100)}%`.padStart(7)}  ${compact(l.reachedAtPools).padStart(16)}  ${compact(l.reachedAtClusters).padStart(9)}`,
      );
    }
    lines.push('');
    for (const [i, l] of limits.slice(0, 3).entries()) {
      lines.push(
        `${i + 1}. ${l.what} — ${compact(l.atFleet)} of ${compact(l.limit.value)} ${l.limit.unit}`,
        `   ${l.how}`,
        `   change: ${l.change}`,
        `   source: ${l.limit.source}`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
