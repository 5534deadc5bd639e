/**
 * Everything the rollout function talks to. Built from the environment in the cloud, from local
 * endpoints by the local stack, the CLI and tests — all call the same handler with it.
 */
import { randomBytes } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import type { ClusterConnection } from '../../adapters/kubernetes/http/index.ts';
import type { ClusterRegistration, StateTable } from '../../adapters/state-table/index.ts';
import { createStateTable, getCluster, listClusters } from '../../adapters/state-table/index.ts';
import type { DeadLetterSink } from '../common/dead-letters.ts';
import { cloudDeadLetters } from '../common/sqs-dead-letters.ts';
import type { RolloutClusterOps } from './cluster-ops.ts';

export const SERVICE_NAME = 'pool-spirit-rollout';
export const METRICS_NAMESPACE = 'PoolSpirit';

export interface RolloutDeps {
  table: StateTable;
  cluster(clusterId: string): Promise<ClusterRegistration | undefined>;
  /** Registered clusters carrying every label of the selector. */
  clusters(selector: Record<string, string>): Promise<ClusterRegistration[]>;
  clusterAccess: ClusterAccessResolver;
  /** The apiserver operations for a resolved cluster; tests wrap it to count calls or inject faults. */
  clusterOps(connection: ClusterConnection, clusterId: string): RolloutClusterOps;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** Clusters read or changed at once within one invocation. */
  clusterConcurrency: number;
  /** Id for a rollout started without one. */
  newRolloutId(now: Date): string;
  /** Where input that can never succeed is recorded (functions/common/observed-handler.ts). */
  deadLetters?: DeadLetterSink;
}

export type RolloutDepsInput = Partial<RolloutDeps> & Pick<RolloutDeps, 'table'>;

/**
 * The apiserver client (retry policies, HTTP, apply) loads on the first call, as a chunk of its own: most
 * invocations are the schedule's tick with no rollout running, which never reach a cluster, and a cold
 * start of those need not compile it (docs/deploy.md, "Bundle size and load time").
 */
function lazyClusterOps(connection: ClusterConnection): RolloutClusterOps {
  let loaded: RolloutClusterOps | undefined;
  let loading: Promise<RolloutClusterOps> | undefined;
  const ops = () => (loading ??= import('./cluster-ops.ts').then((m) => (loaded = m.rolloutClusterOps(connection))));
  const none = { reads: 0, writes: 0, retries: 0 };
  return {
    get counters() {
      return loaded?.counters ?? none;
    },
    listPoolSpirits: async () => (await ops()).listPoolSpirits(),
    applySpecFields: async (name, specFields) => (await ops()).applySpecFields(name, specFields),
  };
}

/** `rollout-20260130-101500-3fa2`: sortable by start time, readable, a DNS label. */
export function defaultRolloutId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15).toLowerCase();
  return `rollout-${stamp}-${randomBytes(2).toString('hex')}`;
}

export function rolloutDeps(input: RolloutDepsInput): RolloutDeps {
  const clock = input.clock ?? (() => new Date());
  return {
    cluster: (id) => getCluster(input.table, id),
    clusters: (selector) => listClusters(input.table, selector),
    clusterAccess: createClusterAccess({ now: clock }),
    clusterOps: (connection) => lazyClusterOps(connection),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    clusterConcurrency: 8,
    newRolloutId: defaultRolloutId,
    ...input,
    logger: input.logger ?? new Logger({ serviceName: SERVICE_NAME }),
    clock,
  };
}

/** The cloud wiring: STATE_TABLE_NAME names the table; credentials come from the execution role. */
export function rolloutDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): RolloutDeps {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const dynamo = new DynamoDBClient({});
  const table = createStateTable({ client: dynamo, tableName });
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return rolloutDeps({
    table,
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
    deadLetters: cloudDeadLetters(env, credentials),
  });
}
