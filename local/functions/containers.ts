/**
 * How the local stack builds one execution environment of each function from plain, serialisable settings —
 * the same factory whether the container lives in the main thread or in a worker thread, so both run the
 * very handler the cloud runs.
 */
import type { Handler } from '../lambda-runtime.ts';
import { createStateTable } from '../../adapters/state-table/index.ts';
import { createReconcileHandler } from '../../functions/reconcile/handler.ts';
import { localDynamoClient } from '../dynamodb.ts';
import { localObservability } from '../fleet/observability.ts';

export interface ContainerSettings {
  dynamoEndpoint: string;
  tableName: string;
}

export const CONTAINER_FACTORIES = {
  reconcile: (s: ContainerSettings): Handler =>
    createReconcileHandler({
      table: createStateTable({ client: localDynamoClient(s.dynamoEndpoint), tableName: s.tableName }),
      ...localObservability('pool-spirit-reconciler'),
    }),
} satisfies Record<string, (s: ContainerSettings) => Handler>;

export type ContainerKind = keyof typeof CONTAINER_FACTORIES;
