/**
 * Fleet audit benchmark: converge a local fleet (default 20 clusters × 50 pools, sim mode), stop
 * the forwarders (the outage audits exist for: nothing else will notice the drift), inject one drift of each
 * kind into its own cluster, audit the whole fleet once, check every injected drift is found with the right
 * kind and pool, let the requested reconciles run, audit again and check the fixable ones are gone.
 * Reports times and apiserver/table operations per cluster.
 * `npm run bench -- audit [--clusters 20] [--pools 50] [--nodes-per-pool 2]`
 */
import { execFile } from 'node:child_process';
import { parseArgs, promisify } from 'node:util';
import { Logger } from '@aws-lambda-powertools/logger';
import { intFlag } from '../../cli/command.ts';
import type { Finding } from '../../core/audit/index.ts';
import { auditDeps, auditNow } from '../../functions/audit/handler.ts';
import type { FleetCluster, LocalFleet } from '../local/fleet/fleet.ts';
import { KUBECTL } from '../local/kube-bins/index.ts';
import { convergedAfter, FLEET_SHAPE_FLAGS, fleetShape, withBenchFleet } from './lib/bench-fleet.ts';
import { median, round } from './lib/stats.ts';

const exec = promisify(execFile);
const log = (line: string) => process.stderr.write(`[audit] ${line}\n`);
const NS = 'pool-spirit-system';
const MI = 2 ** 20;

interface Injection {
  cluster: string;
  kind: Finding['kind'];
  pool: string;
  fixable: boolean;
  inject(kubectl: (...args: string[]) => Promise<string>, cluster: FleetCluster): Promise<void>;
}

const statusPatch = (pool: string, status: object) => [
  'patch',
  'poolspirit',
  pool,
  '--subresource=status',
  '--type=merge',
  '-p',
  JSON.stringify({ status }),
];

function injections(clusterIds: string[]): Injection[] {
  const all: Omit<Injection, 'cluster'>[] = [
    {
      kind: 'spec-drift',
      pool: 'pool-00',
      fixable: true,
      inject: (k) => k('delete', 'service', '-n', NS, 'ps-pool-00').then(() => undefined),
    },
    {
      kind: 'spec-drift',
      pool: 'pool-01',
      fixable: true,
      inject: (k) =>
        k(
          'patch',
          'deployment',
          '-n',
          NS,
          'ps-pool-01',
          '--type=json',
          '-p',
          JSON.stringify([
            { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.example/edited:1' },
          ]),
        ).then(() => undefined),
    },
    {
      kind: 'missing-pool-spirit',
      pool: 'pool-02',
      fixable: true,
      inject: (k) => k('delete', 'poolspirit', 'pool-02', '--wait=true').then(() => undefined),
    },
    {
      kind: 'orphan',
      pool: 'gone',
      fixable: false,
      inject: async (k) => {
        await k('create', 'configmap', '-n', NS, 'ps-gone-bootstrap', '--from-literal=a=b');
        await k(
          'label',
          'configmap',
          '-n',
          NS,
          'ps-gone-bootstrap',
          'app.kubernetes.io/managed-by=pool-spirit',
          'poolspirit.io/pool=gone',
        );
      },
    },
    {
      kind: 'etcd-near-quota',
      pool: 'pool-03',
      fixable: false,
      inject: (k) =>
        k(
          ...statusPatch('pool-03', {
            etcd: { healthy: true, alarms: [], dbSizeBytes: 470 * MI, quotaBackendBytes: 512 * MI },
          }),
        ).then(() => undefined),
    },
    {
      kind: 'etcd-alarm',
      pool: 'pool-04',
      fixable: false,
      inject: (k) =>
        k(
          ...statusPatch('pool-04', {
            etcd: { healthy: true, alarms: ['NOSPACE'], dbSizeBytes: 512 * MI, quotaBackendBytes: 512 * MI },
          }),
        ).then(() => undefined),
    },
    {
      kind: 'misplaced',
      pool: 'pool-05',
      fixable: false,
      inject: async (k) => {
        const pod = JSON.parse(await k('get', 'pods', '-n', NS, '-l', 'poolspirit.io/pool=pool-05', '-o', 'json'))
          .items[0];
        await k('label', 'node', pod.spec.nodeName, 'apps.openyurt.io/nodepool=pool-06', '--overwrite');
      },
    },
    {
      // The pool's YurtHubs stop electing: the sim agent no longer renews its leader, which then goes away.
      kind: 'no-leader',
      pool: 'pool-07',
      fixable: false,
      inject: (k, c) => {
        c.leaderRenewals?.forget('pool-07');
        return k(...statusPatch('pool-07', { leader: null })).then(() => undefined);
      },
    },
    {
      kind: 'stale-leader',
      pool: 'pool-08',
      fixable: false,
      inject: (k, c) => {
        c.leaderRenewals?.forget('pool-08');
        return k(
          ...statusPatch('pool-08', {
            leader: {
              holder: 'pool-08-node-0',
              renewTime: new Date(Date.now() - 3 * 86_400_000).toISOString(),
              transitions: 0,
            },
          }),
        ).then(() => undefined);
      },
    },
  ];
  return all.map((inj, i) => ({ ...inj, cluster: clusterIds[i % clusterIds.length] }));
}

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      ...FLEET_SHAPE_FLAGS,
      'nodes-per-pool': { type: 'string', default: '2' },
      'converge-timeout': { type: 'string', default: '1800' },
    },
  });
  // One pool per injected drift kind.
  const { clusters, pools } = fleetShape(values, { pools: 9 });
  const nodesPerPool = intFlag('nodes-per-pool', values['nodes-per-pool'], 1, 100);
  const timeoutS = intFlag('converge-timeout', values['converge-timeout'], 1, 86_400);
  log(`starting ${clusters} clusters × ${pools} pools…`);
  const t0 = performance.now();
  // The clusters stay on the main thread: the drifts stop a pool's simulated leader renewals (leaderRenewals).
  return withBenchFleet('audit', { clusters, pools, nodesPerPool, clusterThreads: 0 }, async (fleet) => {
    const convergeSeconds = await convergedAfter(fleet, t0, timeoutS * 1000);
    log(`converged in ${convergeSeconds} s`);
    return {
      fleet: { clusters, poolsPerCluster: pools, nodesPerPool, convergeSeconds },
      ...(await auditScenario(fleet)),
    };
  });
}

/**
 * On a converged fleet: stop the forwarders (the outage audits exist for), inject one drift of each kind,
 * audit the whole fleet once, check each is found with the right kind and pool, let the requested
 * reconciles run and audit again until the fixable ones are gone.
 */
export async function auditScenario(fleet: LocalFleet) {
  log('stopping forwarders and injecting drift');
  for (const c of fleet.clusters) await c.forwarder.stop(2_000);
  const f = fleet;
  const plan = injections(fleet.clusters.map((c) => c.id));
  for (const inj of plan) {
    const cluster = f.clusters.find((c) => c.id === inj.cluster)!;
    await inj.inject(
      async (...a) => (await exec(KUBECTL, ['--kubeconfig', cluster.kubeconfigPath, ...a])).stdout,
      cluster,
    );
  }

  const deps = auditDeps({
    table: fleet.table,
    events: { putEvents: async (entries) => f.bus.putEvents(entries).Entries },
    eventBusName: fleet.eventBusName,
    logger: new Logger({ logLevel: 'ERROR' }),
  });
  const reconcilesBefore = fleet.reconcile.stats.invocations;
  const a0 = performance.now();
  const first = await auditNow(deps, { requestedBy: 'bench' });
  const auditMs = performance.now() - a0;
  const found = plan.map((inj) => {
    const record = first.results.find((r) => r.record.cluster === inj.cluster)!.record;
    const hit = record.findings.find((x) => x.kind === inj.kind && x.pool === inj.pool);
    return {
      cluster: inj.cluster,
      kind: inj.kind,
      pool: inj.pool,
      found: !!hit,
      fixable: hit?.fixable,
      reason: hit?.reason,
    };
  });
  const allFindings = first.results.flatMap((r) => r.record.findings);
  const unexpected = allFindings.filter((x) => !plan.some((p) => p.cluster === x.cluster && p.pool === x.pool));
  log(
    `audit of ${fleet.clusters.length} clusters in ${(auditMs / 1000).toFixed(1)} s: ${found.filter((x) => x.found).length}/${plan.length} injected drifts found, ${unexpected.length} other findings`,
  );

  const requested = first.results.reduce((n, r) => n + r.reconcileRequests, 0);
  const f0 = performance.now();
  const deadline = Date.now() + 120_000;
  let remainingFixable: Finding[] = [];
  for (;;) {
    await fleet.bus.drain();
    const again = await auditNow(
      { ...deps, events: undefined },
      { clusterIds: [...new Set(plan.filter((p) => p.fixable).map((p) => p.cluster))], requestedBy: 'bench' },
    );
    remainingFixable = again.results.flatMap((r) => r.record.findings).filter((x) => x.fixable && x.kind !== 'unready');
    if (remainingFixable.length === 0 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const fixS = (performance.now() - f0) / 1000;
  const perCluster = first.results.map((r) => ({
    reads: r.clusterReads,
    writeUnits: r.tableWriteUnits,
    ms: r.record.durationMs ?? 0,
  }));
  return {
    audit: {
      seconds: round(auditMs / 1000, 2),
      concurrency: deps.concurrency,
      perCluster: {
        apiReadsMedian: median(perCluster.map((p) => p.reads)),
        apiReadsMax: Math.max(...perCluster.map((p) => p.reads)),
        tableWriteUnitsMedian: median(perCluster.map((p) => p.writeUnits)),
        tableWriteUnitsMax: Math.max(...perCluster.map((p) => p.writeUnits)),
        durationMsMedian: median(perCluster.map((p) => p.ms)),
        durationMsMax: Math.max(...perCluster.map((p) => p.ms)),
      },
      injected: found,
      allFound: found.every((x) => x.found),
      unexpectedFindings: unexpected.map((x) => `${x.cluster} ${x.kind} ${x.pool}: ${x.reason}`),
    },
    fix: {
      reconcilesRequested: requested,
      reconcilesRun: fleet.reconcile.stats.invocations - reconcilesBefore,
      secondsUntilFixed: round(fixS, 1),
      remainingFixable: remainingFixable.map((x) => `${x.cluster} ${x.kind} ${x.pool}`),
    },
    deadLetters: fleet.bus.deadLetters().length,
  };
}
