import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { adjustedProfile } from '../../core/cost/adjust.ts';
import {
  CONTROLLER_REQUESTS,
  compareWithController,
  FORWARDER_REQUESTS,
  type PodRequests,
} from '../../core/cost/controller.ts';
import { MEASURED_PROFILE } from '../../core/cost/measured-profile.ts';
import { DEFAULT_USAGE, type FleetUsage, monthlyCost } from '../../core/cost/model.ts';
import { type Prices, parsePrices, type RegionPrices, regionPrices } from '../../core/cost/prices.ts';
import { isQuantity, quantityBytes, quantityValue } from '../../core/quantity.ts';
import type { Command } from '../command.ts';
import { intFlag, UsageError } from '../command.ts';

export const DEFAULT_PRICES_FILE = join(import.meta.dirname, '..', '..', 'core', 'cost', 'prices-aws-2026-12.json');

/** `10m`, `1h`, `30` (minutes) → minutes. */
export function minutesFlag(name: string, raw: unknown): number {
  const m = /^(\d+(?:\.\d+)?)(m|h|d)?$/.exec(String(raw));
  if (!m || Number(m[1]) <= 0)
    throw new UsageError(`--${name} must be a duration like 10m, 1h or 1d (or minutes), got "${String(raw)}"`);
  return Number(m[1]) * ({ m: 1, h: 60, d: 1440 } as const)[(m[2] ?? 'm') as 'm' | 'h' | 'd'];
}

function numberFlag(name: string, raw: unknown, min: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number ≥ ${min}, got "${String(raw)}"`);
  return n;
}

function podFlag(values: Record<string, unknown>, base: PodRequests): PodRequests {
  const cpu = values['controller-cpu'];
  const memory = values['controller-memory'];
  if (cpu !== undefined && !isQuantity(cpu))
    throw new UsageError(`--controller-cpu must be a CPU quantity like 100m or 0.5, got "${String(cpu)}"`);
  if (memory !== undefined && !isQuantity(memory))
    throw new UsageError(`--controller-memory must be a memory quantity like 256Mi, got "${String(memory)}"`);
  return {
    cpu: cpu !== undefined ? quantityValue(String(cpu)) : base.cpu,
    memoryGiB: memory !== undefined ? quantityBytes(String(memory)) / 2 ** 30 : base.memoryGiB,
    replicas:
      values['controller-replicas'] !== undefined
        ? intFlag('controller-replicas', values['controller-replicas'], 1, 10)
        : base.replicas,
  };
}

const usd = (n: number) => (n >= 100 ? `$${n.toFixed(0)}` : n >= 1 ? `$${n.toFixed(2)}` : `$${n.toFixed(4)}`);

export const costCommand: Command = {
  path: ['cost'],
  summary: 'the monthly cost of a fleet on the serverless reconciler, its parts, and an always-on controller compared',
  options: {
    clusters: { type: 'string', default: '10', valueName: 'N', description: 'clusters in the fleet' },
    'pools-per-cluster': { type: 'string', default: '20', valueName: 'M', description: 'edge pools per cluster' },
    'audit-every': {
      type: 'string',
      default: '10m',
      valueName: 'D',
      description: 'audit schedule (serverless.yml: rate(10 minutes))',
    },
    'probe-every': {
      type: 'string',
      default: '5m',
      valueName: 'D',
      description: 'leader probe schedule (serverless.yml: rate(5 minutes))',
    },
    'rollouts-per-month': {
      type: 'string',
      default: '2',
      valueName: 'R',
      description: 'fleet-wide rollouts a month (each updates every pool)',
    },
    'new-pools-per-month': { type: 'string', default: '0', valueName: 'K', description: 'pools created a month' },
    prices: { type: 'string', valueName: 'FILE', description: 'prices JSON (same shape as the defaults file)' },
    region: {
      type: 'string',
      default: 'us-east-1',
      valueName: 'REGION',
      description: 'region of the prices file to use',
    },
    'controller-cpu': {
      type: 'string',
      valueName: 'CPU',
      description: `controller pod's CPU request (default ${CONTROLLER_REQUESTS.cpu * 1000}m)`,
    },
    'controller-memory': {
      type: 'string',
      valueName: 'MEM',
      description: `controller pod's memory request (default ${CONTROLLER_REQUESTS.memoryGiB * 1024}Mi)`,
    },
    'controller-replicas': {
      type: 'string',
      valueName: 'N',
      description: `controller replicas per cluster (default ${CONTROLLER_REQUESTS.replicas})`,
    },
    'duration-factor': {
      type: 'string',
      default: '1',
      valueName: 'F',
      description: 'multiply the measured billed milliseconds (they were measured on a loaded machine: an upper bound)',
    },
    'metric-series-per-cluster': {
      type: 'string',
      valueName: 'N',
      description: 'custom metric series per cluster (default: as measured; 0 = no clusterId metric dimension)',
    },
    json: { type: 'boolean', description: 'print the result as JSON' },
  },
  details: `
Multiplies the counts measured on the local fleet (core/cost/measured-profile.ts, re-measured by
\`npm run bench -- cost\`) by how often each kind of work happens and by list prices (default: the dated
file core/cost/prices-aws-2026-12.json, which names its sources). The comparison prices a controller pod per
cluster as the node capacity its requests reserve, against the serverless side plus its forwarder pod
(${FORWARDER_REQUESTS.cpu * 1000}m, ${FORWARDER_REQUESTS.memoryGiB * 1024}Mi) per cluster. See docs/cost.md.

Examples:
  spiritctl cost --clusters 500 --pools-per-cluster 20
  spiritctl cost --clusters 50 --pools-per-cluster 20 --audit-every 1h --json
  spiritctl cost --prices my-prices.json --region eu-west-1`,
  async run({ values }) {
    const fleet: FleetUsage = {
      ...DEFAULT_USAGE,
      clusters: intFlag('clusters', values.clusters, 1, 100_000),
      poolsPerCluster: intFlag('pools-per-cluster', values['pools-per-cluster'], 0, 100_000),
      auditEveryMinutes: minutesFlag('audit-every', values['audit-every']),
      probeEveryMinutes: minutesFlag('probe-every', values['probe-every']),
      rolloutsPerMonth: numberFlag('rollouts-per-month', values['rollouts-per-month'], 0),
      newPoolsPerMonth: numberFlag('new-pools-per-month', values['new-pools-per-month'], 0),
    };
    const file = (values.prices as string | undefined) ?? DEFAULT_PRICES_FILE;
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      throw new UsageError(`--prices: cannot read ${file}: ${(err as Error).message}`);
    }
    let prices: Prices;
    try {
      prices = parsePrices(doc);
    } catch (err) {
      throw new UsageError(`--prices ${file}: ${(err as Error).message}`);
    }
    let region: RegionPrices;
    try {
      region = regionPrices(prices, String(values.region));
    } catch (err) {
      throw new UsageError(`--region: ${(err as Error).message}`);
    }
    const controller = podFlag(values, CONTROLLER_REQUESTS);
    const profile = adjustedProfile(MEASURED_PROFILE, {
      durationFactor: numberFlag('duration-factor', values['duration-factor'], 0),
      metricSeriesPerCluster:
        values['metric-series-per-cluster'] === undefined
          ? undefined
          : numberFlag('metric-series-per-cluster', values['metric-series-per-cluster'], 0),
    });
    const cost = monthlyCost(fleet, profile, region);
    const cmp = compareWithController(fleet, profile, region, controller);
    const result = {
      fleet: { ...fleet, pools: fleet.clusters * fleet.poolsPerCluster },
      prices: { file, region: String(values.region), asOf: prices.asOf, unverified: region.unverified ?? [] },
      inputs: {
        measuredBy: profile.measuredBy,
        durationFactor: Number(values['duration-factor']),
        metricSeries: profile.metricSeries,
      },
      monthly: cost,
      comparison: { controllerRequests: controller, forwarderRequests: FORWARDER_REQUESTS, ...cmp },
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const p = cost.parts;
    const a = cost.byActivity;
    const lines = [
      `fleet: ${fleet.clusters} cluster(s) × ${fleet.poolsPerCluster} pools = ${result.fleet.pools} pools; audit every ${fleet.auditEveryMinutes} min, probe every ${fleet.probeEveryMinutes} min, ${fleet.rolloutsPerMonth} rollout(s) and ${fleet.newPoolsPerMonth} new pool(s) a month`,
      `prices: ${String(values.region)} list prices as of ${prices.asOf} (${file})${region.unverified?.length ? `; unverified: ${region.unverified.join(', ')}` : ''}`,
      '',
      `serverless, per month: ${usd(cost.total)} (${usd(cost.perPool)} per pool)`,
      `  Lambda requests     ${usd(p.lambdaRequests).padStart(10)}   ${Math.round(Object.values(cost.counts.invocations).reduce((n, v) => n + (v ?? 0), 0)).toLocaleString('en-US')} invocations`,
      `  Lambda duration     ${usd(p.lambdaDuration).padStart(10)}   ${Math.round(cost.counts.gbSeconds).toLocaleString('en-US')} GB-s`,
      `  EventBridge         ${usd(p.eventBridge).padStart(10)}   ${Math.round(cost.counts.billedEvents).toLocaleString('en-US')} billed events`,
      `  DynamoDB reads      ${usd(p.dynamodbReads).padStart(10)}   ${Math.round(cost.counts.readUnits).toLocaleString('en-US')} RRU`,
      `  DynamoDB writes     ${usd(p.dynamodbWrites).padStart(10)}   ${Math.round(cost.counts.writeUnits).toLocaleString('en-US')} WRU`,
      `  SQS                 ${usd(p.sqs).padStart(10)}   ${Math.round(cost.counts.sqsMessages).toLocaleString('en-US')} messages`,
      `  CloudWatch logs     ${usd(p.logIngestion + p.logStorage).padStart(10)}   ${cost.counts.logGb.toFixed(2)} GB ingested`,
      `  custom metrics      ${usd(p.customMetrics).padStart(10)}   ${cost.counts.metricSeries} series`,
      `  by activity: audits ${usd(a.audits)}, probes ${usd(a.probes)}, rollout ticks ${usd(a.rolloutTicks)}, rollouts ${usd(a.rollouts)}, new pools ${usd(a.newPools)}, at rest ${usd(a.steadyState)}, metrics ${usd(a.customMetrics)}`,
      '',
      `with its forwarder pod per cluster: ${usd(cmp.serverless.total)} (forwarders ${usd(cmp.serverless.forwarders)})`,
      `always-on controller pod per cluster (${controller.replicas} × ${Math.round(controller.cpu * 1000)}m CPU, ${Math.round(controller.memoryGiB * 1024)}Mi): ${usd(cmp.controller.total)} (${usd(cmp.controller.perCluster)} per cluster)`,
      `serverless ÷ controller: ${cmp.ratio.toFixed(2)}`,
      cmp.breakEvenPoolsPerCluster === null
        ? `break-even: none — ${cmp.cheaperAtAnySize === 'serverless' ? 'serverless' : 'the controller'} is cheaper at any number of pools per cluster`
        : `break-even: serverless is cheaper below ${Math.floor(cmp.breakEvenPoolsPerCluster).toLocaleString('en-US')} pools per cluster (at ${fleet.clusters} clusters)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
