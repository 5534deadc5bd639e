/**
 * Everything the probe function talks to. Built from the environment in the cloud; the local stack and
 * tests pass their own table, clock and cluster access to the same handler factory.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterRegistration, StateTable } from '../../adapters/state-table/index.ts';
import { createStateTable, DEFAULT_PROBE_RETENTION_MS, getCluster, listClusters } from '../../adapters/state-table/index.ts';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../adapters/kubernetes/index.ts';
import type { LeaderThresholds } from '../../core/leader/index.ts';
import { DEFAULT_LEADER_THRESHOLDS } from '../../core/leader/index.ts';

export const SERVICE_NAME = 'pool-spirit-probe';
export const METRICS_NAMESPACE = 'PoolSpirit';

/**
 * The agent reports the Lease into the PoolSpirit status periodically, so the probe gives a renewTime
 * 45 s of grace on top of the 15 s lease: stale after 60 s, the same line core/status.ts draws for the
 * LeaderElected condition (a pool must not be "stale" here and "Elected" on its own status).
 */
export const PROBE_LEADER_THRESHOLDS: LeaderThresholds = { ...DEFAULT_LEADER_THRESHOLDS, staleGraceSeconds: 45 };

export interface ProbeDeps {
  table: StateTable;
  cluster(clusterId: string): Promise<ClusterRegistration | undefined>;
  clusters(): Promise<ClusterRegistration[]>;
  clusterAccess: ClusterAccessResolver;
  clusterClient(kc: KubeConfig, clusterId: string): ClusterClient;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  thresholds: LeaderThresholds;
  /** How long observations are kept (TTL). */
  retentionMs: number;
  /** Clusters probed at once by a scheduled run. */
  clusterConcurrency: number;
}

export type ProbeDepsInput = Partial<ProbeDeps> & Pick<ProbeDeps, 'table'>;

export function probeDeps(input: ProbeDepsInput): ProbeDeps {
  const clock = input.clock ?? (() => new Date());
  return {
    cluster: (id) => getCluster(input.table, id),
    clusters: () => listClusters(input.table),
    clusterAccess: createClusterAccess({ now: clock }),
    clusterClient: (kc) => createClusterClient(kc, { now: clock, component: SERVICE_NAME }),
    logger: new Logger({ serviceName: SERVICE_NAME }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    thresholds: PROBE_LEADER_THRESHOLDS,
    retentionMs: DEFAULT_PROBE_RETENTION_MS,
    clusterConcurrency: 4,
    ...input,
    clock,
  };
}

/** Cloud wiring: STATE_TABLE_NAME names the table; credentials come from the execution role. */
export function probeDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ProbeDeps {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const dynamo = new DynamoDBClient({});
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return probeDeps({
    table: createStateTable({ client: dynamo, tableName }),
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
  });
}
