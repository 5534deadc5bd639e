/**
 * A handle on the state table shared by the repositories: the document client, the table name and a
 * write-unit meter. Every write asks DynamoDB for its consumed capacity so functions can publish a
 * metric and the benchmark can check the ≤ 3 write units per reconcile budget.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DeleteCommandInput, PutCommandInput, QueryCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { invocationSignal } from '../invocation-signal.ts';
import type { ItemKey } from './keys.ts';

export type WriteOp = 'put' | 'update' | 'delete';
export type WriteUnitsListener = (units: number, op: WriteOp, outcome: 'ok' | 'condition-failed') => void;

export interface StateTable {
  readonly doc: DynamoDBDocumentClient;
  readonly name: string;
  /** Observes every write's consumed write units (metrics, benchmarks). */
  onWriteUnits?: WriteUnitsListener;
}

export function createStateTable(options: {
  client: DynamoDBClient;
  tableName: string;
  onWriteUnits?: WriteUnitsListener;
}): StateTable {
  const doc = DynamoDBDocumentClient.from(options.client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { doc, name: options.tableName, onWriteUnits: options.onWriteUnits };
}

/**
 * The same table, with a tally of the write units spent through it (still reported to the table's own
 * listener): how a function reports the table cost of one invocation.
 */
export function meteredTable(table: StateTable): { table: StateTable; writeUnits(): number } {
  let units = 0;
  return {
    table: {
      ...table,
      onWriteUnits: (n, op, outcome) => {
        units += n;
        table.onWriteUnits?.(n, op, outcome);
      },
    },
    writeUnits: () => units,
  };
}

export type Item = Record<string, unknown>;

export function isConditionFailed(err: unknown): boolean {
  return (
    err instanceof ConditionalCheckFailedException ||
    (err as { name?: string } | null)?.name === 'ConditionalCheckFailedException'
  );
}

/**
 * DynamoDB bills a failed conditional write at least 1 write unit but returns no ConsumedCapacity for it;
 * we report 1 so the meter never under-counts.
 */
const FAILED_CONDITIONAL_WRITE_UNITS = 1;

async function metered<T extends { ConsumedCapacity?: { CapacityUnits?: number } }>(
  table: StateTable,
  op: WriteOp,
  send: () => Promise<T>,
): Promise<T> {
  try {
    const out = await send();
    table.onWriteUnits?.(out.ConsumedCapacity?.CapacityUnits ?? 1, op, 'ok');
    return out;
  } catch (err) {
    if (isConditionFailed(err)) table.onWriteUnits?.(FAILED_CONDITIONAL_WRITE_UNITS, op, 'condition-failed');
    throw err;
  }
}

type Without<T, K extends keyof T> = Omit<T, K>;

/**
 * Every request through the table obeys the invocation's deadline (adapters/invocation-signal.ts): none
 * starts after it, and one in flight is aborted.
 */
const deadline = () => ({ abortSignal: invocationSignal() });

export async function getItem(table: StateTable, key: ItemKey, consistent = true): Promise<Item | undefined> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.name, Key: key, ConsistentRead: consistent }),
    deadline(),
  );
  return out.Item;
}

/** How often keys DynamoDB left unprocessed (throttling) are asked for again before the read fails. */
const BATCH_GET_ATTEMPTS = 5;
const BATCH_GET_RETRY_BASE_MS = 25;

/**
 * Several items in one round trip (BatchGetItem; at most 100 keys). Returns one entry per key, in the
 * order asked, undefined where there is no item. Keys DynamoDB leaves unprocessed are asked for again
 * with a short backoff; still unprocessed after that, the read fails like a throttled GetItem would.
 */
export async function getItems(
  table: StateTable,
  itemKeys: readonly ItemKey[],
  consistent = true,
): Promise<Array<Item | undefined>> {
  const found = new Map<string, Item>();
  const id = (k: { pk?: unknown; sk?: unknown }) => `${String(k.pk)}\u0000${String(k.sk)}`;
  let pending: ItemKey[] = [...itemKeys];
  for (let attempt = 1; pending.length > 0; attempt++) {
    const out = await table.doc.send(
      new BatchGetCommand({ RequestItems: { [table.name]: { Keys: pending, ConsistentRead: consistent } } }),
      deadline(),
    );
    for (const item of out.Responses?.[table.name] ?? []) found.set(id(item), item);
    pending = (out.UnprocessedKeys?.[table.name]?.Keys ?? []) as ItemKey[];
    if (pending.length === 0) break;
    if (attempt >= BATCH_GET_ATTEMPTS)
      throw new Error(
        `BatchGetItem on ${table.name}: ${pending.length} key(s) still unprocessed after ${attempt} attempts`,
      );
    await new Promise((resolve) => setTimeout(resolve, BATCH_GET_RETRY_BASE_MS * 2 ** (attempt - 1)));
  }
  return itemKeys.map((k) => found.get(id(k)));
}

export function putItem(table: StateTable, input: Without<PutCommandInput, 'TableName'>) {
  return metered(table, 'put', () =>
    table.doc.send(new PutCommand({ ...input, TableName: table.name, ReturnConsumedCapacity: 'TOTAL' }), deadline()),
  );
}

export function updateItem(table: StateTable, input: Without<UpdateCommandInput, 'TableName'>) {
  return metered(table, 'update', () =>
    table.doc.send(new UpdateCommand({ ...input, TableName: table.name, ReturnConsumedCapacity: 'TOTAL' }), deadline()),
  );
}

export function deleteItem(table: StateTable, input: Without<DeleteCommandInput, 'TableName'>) {
  return metered(table, 'delete', () =>
    table.doc.send(new DeleteCommand({ ...input, TableName: table.name, ReturnConsumedCapacity: 'TOTAL' }), deadline()),
  );
}

/** Every page of a Query (partitions here are small: one cluster's pools, the registry). */
export async function queryAll(table: StateTable, input: Without<QueryCommandInput, 'TableName'>): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.doc.send(
      new QueryCommand({ ...input, TableName: table.name, ExclusiveStartKey: start }),
      deadline(),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}
