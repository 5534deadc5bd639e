/**
 * What every fleet function (audit, cloud events, probe) needs besides its own settings: the registry, a
 * way to reach each cluster's apiserver, a clock, a logger and metrics. One definition, so the functions
 * wire their clusters the same way and the cloud wiring reads the same environment.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import { eventBridgePutEvents } from '../../adapters/eventbridge/put-events.ts';
import type { ClusterConnection } from '../../adapters/kubernetes/http/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../adapters/kubernetes/index.ts';
import type { ClusterRegistration, StateTable } from '../../adapters/state-table/index.ts';
import { createStateTable, getCluster, listClusters } from '../../adapters/state-table/index.ts';
import type { DeadLetterSink } from './dead-letters.ts';
import { cloudDeadLetters } from './sqs-dead-letters.ts';

export const METRICS_NAMESPACE = 'PoolSpirit';

export interface FleetFunctionDeps {
  table: StateTable;
  cluster(clusterId: string): Promise<ClusterRegistration | undefined>;
  clusters(): Promise<ClusterRegistration[]>;
  clusterAccess: ClusterAccessResolver;
  clusterClient(connection: ClusterConnection, clusterId: string): ClusterClient;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** Where input that can never succeed is recorded (functions/common/observed-handler.ts). */
  deadLetters?: DeadLetterSink;
}

/** Defaults for the shared part; `component` names the Event source in clusters (the service by default). */
export function fleetFunctionDeps(
  table: StateTable,
  serviceName: string,
  clock: () => Date,
  component = serviceName,
): Omit<FleetFunctionDeps, 'clock'> {
  return {
    table,
    cluster: (id) => getCluster(table, id),
    clusters: () => listClusters(table),
    clusterAccess: createClusterAccess({ now: clock }),
    clusterClient: (connection, clusterId) => createClusterClient(connection, { now: clock, component, clusterId }),
    logger: new Logger({ serviceName }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName }),
  };
}

/**
 * The cloud wiring of the table, cluster access and dead letters: STATE_TABLE_NAME, DEAD_LETTER_QUEUE_URL;
 * credentials from the execution role only.
 */
export function cloudTableFromEnvironment(env: NodeJS.ProcessEnv): {
  table: StateTable;
  clusterAccess: ClusterAccessResolver;
  deadLetters: DeadLetterSink;
} {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const dynamo = new DynamoDBClient({});
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return {
    table: createStateTable({ client: dynamo, tableName }),
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
    deadLetters: cloudDeadLetters(env, credentials),
  };
}

/** The cloud wiring of follow-up events: EVENT_BUS_NAME names the bus reconcile/audit/probe requests go to. */
export function cloudEventsFromEnvironment(env: NodeJS.ProcessEnv) {
  const eventBusName = env.EVENT_BUS_NAME;
  if (!eventBusName)
    throw new Error('EVENT_BUS_NAME is not set: expected the name of the event bus follow-up requests go to');
  return { events: eventBridgePutEvents(new EventBridgeClient({})), eventBusName };
}
