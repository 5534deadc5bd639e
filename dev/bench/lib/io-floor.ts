/**
 * The warm-pass benchmark's I/O floor: a Lambda handler (bundled like the functions) that makes the requests a
 * converged pool's no-op pass makes, in the same order and through the product's own clients (the state
 * table's SDK helpers, the cluster access resolver, the Kubernetes client), and nothing else: no lease logic,
 * no render, no comparison, no logging. A pass's CPU above it is the product's own work; the floor itself is
 * what its round trips cost. Its two table writes go to an item of its own.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createClusterAccess } from '../../../adapters/cluster-access/index.ts';
import { type ClusterClient, createClusterClient } from '../../../adapters/kubernetes/index.ts';
import {
  createStateTable,
  getItems,
  keys,
  registrationFromItem,
  updateItem,
} from '../../../adapters/state-table/index.ts';
import { DEFAULT_NAMESPACE, objectNames } from '../../../core/index.ts';

const table = createStateTable({ client: new DynamoDBClient({}), tableName: process.env.STATE_TABLE_NAME ?? '' });
const access = createClusterAccess();

async function floorWrite(clusterId: string, nodePool: string, attribute: string): Promise<void> {
  await updateItem(table, {
    Key: { pk: `BENCH-FLOOR#${clusterId}`, sk: nodePool },
    UpdateExpression: 'SET #a = :now',
    ExpressionAttributeNames: { '#a': attribute },
    ExpressionAttributeValues: { ':now': Date.now() },
  });
}

/** The nine reads of a converged pool's pass, as today's stages make them. */
async function clusterReads(client: ClusterClient, pool: string): Promise<void> {
  const names = objectNames(pool);
  const ns = DEFAULT_NAMESPACE;
  await client.getNodePool(pool);
  await client.getPoolSpirit(pool);
  await Promise.all([
    client.get({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: names.base }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: names.caSecret }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: names.pkiSecret }),
    client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: names.agentSecret }),
    client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: names.base }),
  ]);
  await Promise.all([
    client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: names.bootstrapConfigMap }),
    client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: names.base }),
  ]);
}

export async function handler(event: { detail: { clusterId: string; nodePool: string } }) {
  const { clusterId, nodePool } = event.detail;
  const [, cluster] = await getItems(table, [keys.pool(clusterId, nodePool), keys.cluster(clusterId)]);
  if (!cluster) throw new Error(`cluster ${clusterId} is not registered`);
  await floorWrite(clusterId, nodePool, 'lease');
  const client = createClusterClient(await access.connectionFor(registrationFromItem(cluster)), { clusterId });
  await clusterReads(client, nodePool);
  await floorWrite(clusterId, nodePool, 'outcome');
  return { result: 'unchanged', clusterWrites: 0 };
}
