/**
 * A rollout world on the built control plane (one per cluster) and dynalite, without the reconciler: `settle()` plays the
 * reconciler and the agent deterministically (each PoolSpirit's status follows its spec at once, healthy
 * unless its agent version is marked bad). The clock is virtual, so soak and deadlines cost no waiting.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ClusterConnection } from '../../../adapters/kubernetes/http/index.ts';
import type { StateTable } from '../../../adapters/state-table/index.ts';
import { createStateTable, registerCluster } from '../../../adapters/state-table/index.ts';
import type { LocalDynamo } from '../../../dev/local/dynamodb.ts';
import { ensureTable, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import type { RolloutClusterOps } from '../../../functions/rollout/cluster-ops.ts';
import { rolloutClusterOps } from '../../../functions/rollout/cluster-ops.ts';
import type { RolloutDeps, RolloutResult } from '../../../functions/rollout/handler.ts';
import { createRolloutHandler, rolloutDeps } from '../../../functions/rollout/handler.ts';
import type { TestClusterAccess } from '../../support/local-cluster.ts';
import { startRealTestCluster } from '../../support/real-cluster.ts';

export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };

export interface RolloutFleet {
  clusters: Map<string, TestClusterAccess>;
  dynamo: LocalDynamo;
  table: StateTable;
  deps: RolloutDeps;
  /** Virtual milliseconds since T0. */
  ms: number;
  /** Agent versions whose pools never become healthy, per cluster id ('*' = every cluster). */
  bad: Record<string, string[]>;
  /** Wraps the cluster operations the handler builds (fault injection, counting). */
  wrapOps?: (ops: RolloutClusterOps, clusterId: string) => RolloutClusterOps;
  invoke(event: unknown): Promise<RolloutResult>;
  /** Every PoolSpirit's status follows its spec (what the reconciler and the agent would report). */
  settle(): Promise<void>;
  specs(): Promise<Record<string, Record<string, unknown>>>;
  stop(): Promise<void>;
}

export async function startRolloutFleet(
  clusterCount: number,
  poolsPerCluster: number,
  labels: (i: number) => Record<string, string> = () => ({}),
): Promise<RolloutFleet> {
  const dynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, 'rollout-test');
  const table = createStateTable({ client: dynamo.client, tableName: 'rollout-test' });
  const clusters = new Map<string, TestClusterAccess>();
  // The rollout reads and writes PoolSpirits only: kube-apiserver alone, each cluster started at once.
  const ids = Array.from({ length: clusterCount }, (_, i) => `c${i + 1}`);
  const started = await Promise.allSettled(ids.map((id) => startRealTestCluster({ name: id, controllers: false })));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
    await dynamo.stop();
    throw failed.reason;
  }
  for (const [i, id] of ids.entries()) {
    const t = (started[i] as PromiseFulfilledResult<TestClusterAccess>).value;
    clusters.set(id, t);
    await registerCluster(
      table,
      { id, access: { kind: 'kubeconfig-file', path: t.kubeconfigPath }, labels: labels(i) },
      new Date(T0),
    );
    for (let p = 0; p < poolsPerCluster; p++) {
      await t.api.create({
        apiVersion: 'poolspirit.io/v1alpha1',
        kind: 'PoolSpirit',
        metadata: { name: `pool-${p}` },
        spec: { nodePool: `pool-${p}`, version: '0.1.0' },
      } as never);
    }
  }
  // What the handler's dependencies and settle() read; the fleet returned is this same object.
  const state: Pick<RolloutFleet, 'clusters' | 'dynamo' | 'table' | 'ms' | 'bad' | 'wrapOps'> = {
    clusters,
    dynamo,
    table,
    ms: 0,
    bad: {},
  };
  const metrics = new Metrics({ namespace: 'RolloutTest', serviceName: 'rollout-test', logger: silent });
  Object.assign(metrics, { console: { log() {} } });
  const deps = rolloutDeps({
    table,
    clock: () => new Date(T0 + state.ms),
    logger: new Logger({ serviceName: 'rollout-test', logLevel: 'SILENT' }),
    metrics,
    clusterOps: (connection: ClusterConnection, clusterId: string) => {
      const ops = rolloutClusterOps(connection);
      return state.wrapOps ? state.wrapOps(ops, clusterId) : ops;
    },
  });
  // No dead-letter sink: a terminal error reaches the test as a throw.
  const handler = createRolloutHandler({ ...deps, deadLetters: undefined });
  const invoke = (event: unknown) => handler(event);
  const settle = async () => {
    for (const [id, t] of clusters) {
      const custom = t.kc.makeApiClient(CustomObjectsApi);
      const list = (await custom.listClusterCustomObject({
        group: 'poolspirit.io',
        version: 'v1alpha1',
        plural: 'poolspirits',
      })) as { items: any[] };
      for (const ps of list.items) {
        const agent = ps.spec.agent?.version ?? '0.1.0';
        const bad = [...(state.bad[id] ?? []), ...(state.bad['*'] ?? [])].includes(agent);
        const versions = { bundle: ps.spec.version ?? '0.1.0', agent };
        const prev = ps.status?.versions?.current;
        const time = new Date(T0 + state.ms).toISOString();
        const cond = (type: string, ok: boolean) => ({
          type,
          status: ok ? 'True' : 'False',
          reason: ok ? type : 'WorkloadNotReady',
          message: ok ? '' : 'the pool-spirit pod is not ready',
          lastTransitionTime: time,
          observedGeneration: ps.metadata.generation,
        });
        const status = {
          observedGeneration: ps.metadata.generation,
          phase: bad ? 'Degraded' : 'Running',
          conditions: [cond('Available', !bad), cond('LeaderElected', true)],
          versions: { desired: versions, current: bad ? (prev ?? { bundle: '0.1.0', agent: '0.1.0' }) : versions },
        };
        await custom.patchClusterCustomObjectStatus(
          {
            group: 'poolspirit.io',
            version: 'v1alpha1',
            plural: 'poolspirits',
            name: ps.metadata.name,
            body: { status },
            fieldManager: 'test-reconciler',
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      }
    }
  };
  const specs = async () => {
    const out: Record<string, Record<string, unknown>> = {};
    for (const [id, t] of clusters) {
      const list = (await t.kc
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: 'poolspirit.io', version: 'v1alpha1', plural: 'poolspirits' })) as {
        items: any[];
      };
      for (const ps of list.items) out[`${id}/${ps.metadata.name}`] = ps.spec;
    }
    return out;
  };
  const stop = async () => {
    for (const t of clusters.values()) await t.stop();
    await dynamo.stop();
  };
  const fleet: RolloutFleet = Object.assign(state, { deps, invoke, settle, specs, stop });
  return fleet;
}
