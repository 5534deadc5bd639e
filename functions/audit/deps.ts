/**
 * Everything the audit function talks to. Like reconcile/deps.ts: the Lambda entry point builds it from the
 * environment; the local fleet, `spiritctl audit` and tests build it with local endpoints and pass it to the
 * same handler factory.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { StateTable, ClusterRegistration } from '../../adapters/state-table/index.ts';
import { createStateTable, getCluster, listClusters } from '../../adapters/state-table/index.ts';
import type { ClusterAccessResolver } from '../../adapters/cluster-access/index.ts';
import { createClusterAccess, secretsManagerSource } from '../../adapters/cluster-access/index.ts';
import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import { createClusterClient } from '../../adapters/kubernetes/index.ts';
import { eventBridgePutEvents } from '../../adapters/eventbridge/put-events.ts';
import type { AuditThresholds } from '../../core/audit/index.ts';
import type { FleetDefaults } from '../../core/nodepool.ts';
import type { KeyFactory } from '../../core/render/keys.ts';
import { webCryptoKeyFactory } from '../../core/render/keys.ts';
import { DEFAULT_EVENT_BUS } from '../../events/index.ts';
import type { EventSender } from './send-events.ts';

export const AUDIT_SERVICE_NAME = 'pool-spirit-audit';
export const METRICS_NAMESPACE = 'PoolSpirit';

export interface AuditDeps {
  table: StateTable;
  cluster(clusterId: string): Promise<ClusterRegistration | undefined>;
  clusters(): Promise<ClusterRegistration[]>;
  clusterAccess: ClusterAccessResolver;
  clusterClient(kc: KubeConfig, clusterId: string): ClusterClient;
  /** Where audit requests and reconcile requests go (PutEvents). Undefined: nothing is sent (report only). */
  events?: EventSender;
  eventBusName: string;
  clock: () => Date;
  logger: Logger;
  metrics: Metrics;
  fleetDefaults: FleetDefaults;
  /** Renders the desired PKI when a Secret is missing (the drift check needs something to compare). */
  keyFactory: KeyFactory;
  thresholds?: Partial<AuditThresholds>;
  /** How far back the fleet report's charts reach (the audit itself reads back over the flapping window). */
  historyWindowMs: number;
  namespace?: string;
  /** Clusters audited at once by `auditNow` (the CLI). */
  concurrency: number;
}

export type AuditDepsInput = Partial<AuditDeps> & Pick<AuditDeps, 'table'>;

export function auditDeps(input: AuditDepsInput): AuditDeps {
  const clock = input.clock ?? (() => new Date());
  return {
    cluster: (id) => getCluster(input.table, id),
    clusters: () => listClusters(input.table),
    clusterAccess: createClusterAccess({ now: clock }),
    clusterClient: (kc) => createClusterClient(kc, { now: clock }),
    eventBusName: DEFAULT_EVENT_BUS,
    logger: new Logger({ serviceName: AUDIT_SERVICE_NAME }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: AUDIT_SERVICE_NAME }),
    fleetDefaults: {},
    keyFactory: webCryptoKeyFactory(),
    historyWindowMs: 24 * 3600 * 1000,
    concurrency: 8,
    ...input,
    clock,
  };
}

/** The cloud wiring: STATE_TABLE_NAME and EVENT_BUS_NAME; credentials from the execution role only. */
export function auditDepsFromEnvironment(env: NodeJS.ProcessEnv = process.env): AuditDeps {
  const tableName = env.STATE_TABLE_NAME;
  if (!tableName) throw new Error('STATE_TABLE_NAME is not set: expected the name of the state table');
  const eventBusName = env.EVENT_BUS_NAME;
  if (!eventBusName) throw new Error('EVENT_BUS_NAME is not set: expected the name of the event bus reconcile requests go to');
  const dynamo = new DynamoDBClient({});
  const credentials = dynamo.config.credentials as AwsCredentialIdentityProvider;
  return auditDeps({
    table: createStateTable({ client: dynamo, tableName }),
    clusterAccess: createClusterAccess({ awsCredentials: credentials, secrets: secretsManagerSource() }),
    events: eventBridgePutEvents(new EventBridgeClient({})),
    eventBusName,
  });
}
