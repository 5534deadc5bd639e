/**
 * How the local stack builds one execution environment of each function from plain, serialisable settings —
 * the same factory whether the container lives in the main thread or in a worker thread, so both run the
 * very handler the cloud runs.
 */

import { createStateTable } from '../../../adapters/state-table/index.ts';
import type { DeadLetterSink } from '../../../functions/common/dead-letters.ts';
import { sqsDeadLetterSink } from '../../../functions/common/sqs-dead-letters.ts';
import { createReconcileHandler } from '../../../functions/reconcile/handler.ts';
import { localDynamoClient } from '../dynamodb.ts';
import { localObservability } from '../fleet/observability.ts';
import type { Handler } from '../lambda-runtime.ts';

export interface ContainerSettings {
  dynamoEndpoint: string;
  tableName: string;
  /**
   * The function's dead-letter queue on the local bus (`bus.deadLetterQueueUrl(name)`): input that can
   * never succeed is recorded there and not retried. Without it such input is thrown, and so retried.
   */
  deadLetterQueueUrl?: string;
}

/** The dead-letter sink the cloud uses, pointed at the local bus's queue endpoint. */
export function localDeadLetters(queueUrl: string | undefined): DeadLetterSink | undefined {
  return queueUrl
    ? sqsDeadLetterSink({ queueUrl, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
    : undefined;
}

export const CONTAINER_FACTORIES = {
  reconcile: (s: ContainerSettings): Handler =>
    createReconcileHandler({
      table: createStateTable({ client: localDynamoClient(s.dynamoEndpoint), tableName: s.tableName }),
      ...localObservability('pool-spirit-reconciler'),
      deadLetters: localDeadLetters(s.deadLetterQueueUrl),
    }),
} satisfies Record<string, (s: ContainerSettings) => Handler>;

export type ContainerKind = keyof typeof CONTAINER_FACTORIES;
