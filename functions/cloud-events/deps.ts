/** Everything the cloud-events function talks to (same wiring style as reconcile/deps.ts and audit/deps.ts). */
import type { KubeConfig } from '@kubernetes/client-node';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { ClusterRegistration, StateTable } from '../../adapters/state-table/index.ts';
import { createStateTable, getCluster, listClusters } from '../../adapters/state-table/index.ts';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../adapters/kubernetes/index.ts';
import { eventBridgePutEvents } from '../../adapters/eventbridge/put-events.ts';
import { DEFAULT_EVENT_BUS } from '../../events/index.ts';
import type { EventSender } from '../audit/send-events.ts';

export const CLOUD_EVENTS_SERVICE_NAME = 'pool-spirit-cloud-events';

export interface CloudEventsDeps {
  table: StateTable;
  cluster(clusterId: string): Promise<ClusterRegistration | undefined>;
  clusters(): Promise<ClusterRegistration[]>;
  clusterAccess: ClusterAccessResolver;
  clusterClient(kc: KubeConfig, clusterId: string): ClusterClient;
  events: EventSender;
  eventBusName: string;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  namespace?: string;
  /** Clusters searched at once for the instance's Node. */
  concurrency: number;
}

export type CloudEventsDepsInput = Partial<CloudEventsDeps> & Pick<CloudEventsDeps, 'table' | 'events'>;

export function cloudEventsDeps(input: CloudEventsDepsInput): CloudEventsDeps {
  const clock = input.clock ?? (() => new Date());
  return {
    cluster: (id) => getCluster(input.table, id),
    clusters: () => listClusters(input.table),
    clusterAccess: createClusterAccess({ now: clock }),
    clusterClient: (kc) => createClusterClient(kc, { now: clock, component: CLOUD_EVENTS_SERVICE_NAME }),
    eventBusName: DEFAULT_EVENT_BUS,
    logger: new Logger({ serviceName: CLOUD_EVENTS_SERVICE_NAME }),
    metrics: new Metrics({ namespace: 'PoolSpirit', serviceName: CLOUD_EVENTS_SERVICE_NAME }),
    concurrency: 8,
    ...input,
    clock,
  };
}

export function cloudEventsDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): CloudEventsDeps {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const eventBusName = env.EVENT_BUS_NAME;
  if (!eventBusName) throw new Error('EVENT_BUS_NAME is not set: expected the name of the event bus reconcile requests go to');
  const dynamo = new DynamoDBClient({});
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return cloudEventsDeps({
    table: createStateTable({ client: dynamo, tableName }),
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
    events: eventBridgePutEvents(new EventBridgeClient({})),
    eventBusName,
  });
}
