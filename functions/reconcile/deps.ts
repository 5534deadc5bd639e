/**
 * Everything the reconcile function talks to, in one object. The Lambda entry point builds it from the
 * environment once per container; the local stack, tests and benchmarks build it with local endpoints and
 * pass it to the very same handler factory.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import type { ClusterConnection } from '../../adapters/kubernetes/http/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../adapters/kubernetes/index.ts';
import type { StateTable } from '../../adapters/state-table/index.ts';
import { createStateTable } from '../../adapters/state-table/index.ts';
import type { FleetDefaults } from '../../core/nodepool.ts';
import type { KeyFactory } from '../../core/render/keys.ts';
import { webCryptoKeyFactory } from '../../core/render/keys.ts';
import type { DeadLetterSink } from '../common/dead-letters.ts';
import { cloudDeadLetters } from '../common/sqs-dead-letters.ts';

export const SERVICE_NAME = 'pool-spirit-reconciler';
export const METRICS_NAMESPACE = 'PoolSpirit';

export interface ReconcileDeps {
  table: StateTable;
  clusterAccess: ClusterAccessResolver;
  /** Builds the apiserver client for a resolved cluster; tests wrap it to inject faults. */
  clusterClient(connection: ClusterConnection, clusterId: string): ClusterClient;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** Spec of PoolSpirits created for new edge pools. */
  fleetDefaults: FleetDefaults;
  keyFactory: KeyFactory;
  /** How long a reconcile may hold its pool's lease: longer than the function timeout. */
  leaseTtlMs: number;
  /**
   * How long an invocation that finds its pool's lease held waits (reading the item only) for the holder to
   * finish before it ends as a requeue: a live holder is usually done within a second or two.
   */
  lockedWaitMs: number;
  /** At most this many passes per invocation when other invocations asked for another (requeue). */
  maxPasses: number;
  /** Namespace of the rendered objects. */
  namespace?: string;
  /** Where input that can never succeed is recorded (functions/common/observed-handler.ts). */
  deadLetters?: DeadLetterSink;
}

export type ReconcileDepsInput = Partial<ReconcileDeps> & Pick<ReconcileDeps, 'table'>;

/** Fills in defaults around what the caller provides (the table at least). */
export function reconcileDeps(input: ReconcileDepsInput): ReconcileDeps {
  const logger = input.logger ?? new Logger({ serviceName: SERVICE_NAME });
  const clock = input.clock ?? (() => new Date());
  return {
    clusterAccess: createClusterAccess({ now: clock }),
    clusterClient: (connection, clusterId) => createClusterClient(connection, { now: clock, clusterId }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }),
    fleetDefaults: {},
    keyFactory: webCryptoKeyFactory(),
    leaseTtlMs: 90_000,
    lockedWaitMs: 2_000,
    maxPasses: 3,
    ...input,
    logger,
    clock,
  };
}

/**
 * The cloud wiring, from the function's environment: STATE_TABLE_NAME names the table; credentials come
 * from the execution role through the SDK's default chain (never from variables we set), and the same
 * provider signs EKS tokens.
 */
export function depsFromEnvironment(env: NodeJS.ProcessEnv = process.env): ReconcileDeps {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const dynamo = new DynamoDBClient({});
  const table = createStateTable({ client: dynamo, tableName });
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return reconcileDeps({
    table,
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
    leaseTtlMs: Number(env.RECONCILE_LEASE_TTL_MS ?? 90_000),
    deadLetters: cloudDeadLetters(env, credentials),
  });
}
