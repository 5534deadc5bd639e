import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';

const TableName = 'usage-test';
let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  await ensureTable(dynamo.client, TableName);
});
afterAll(() => dynamo.stop());

describe('local table request-unit metering', () => {
  it('bills writes per 1 KB, reads per 4 KB (half when eventually consistent) and failed conditional writes', async () => {
    const before = dynamo.usage();
    // ~2.5 KB of attribute data: 3 write units to put, 1 read unit strongly consistent, 0.5 eventually.
    const Item = { pk: { S: 'A' }, sk: { S: 'B' }, blob: { S: 'x'.repeat(2500) } };
    await dynamo.client.send(new PutItemCommand({ TableName, Item }));
    const got = await dynamo.client.send(
      new GetItemCommand({ TableName, Key: { pk: Item.pk, sk: Item.sk }, ConsistentRead: true }),
    );
    expect(got.Item?.blob.S).toHaveLength(2500);
    await dynamo.client.send(new GetItemCommand({ TableName, Key: { pk: Item.pk, sk: Item.sk } }));
    await expect(
      dynamo.client.send(new PutItemCommand({ TableName, Item, ConditionExpression: 'attribute_not_exists(pk)' })),
    ).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    const after = dynamo.usage();
    expect(after.writeRequestUnits - before.writeRequestUnits).toBe(3 + 1);
    expect(after.readRequestUnits - before.readRequestUnits).toBe(1.5);
    expect(after.byOperation.PutItem.requests).toBe(2);
    expect(after.byOperation.GetItem.requests).toBe(2);
  });
});
