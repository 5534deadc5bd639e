/**
 * Stopping the local table while requests are under way must not crash the process: dynalite throws
 * "Database is closed", uncaught, from a request it is still working on when its database closes (a stack
 * restart in the chaos soak ended the whole soak that way).
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ensureTable, localDynamoClient, startLocalDynamo } from '../../../dev/local/dynamodb.ts';

describe('stopping the local table', () => {
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  afterEach(() => {
    process.off('uncaughtException', record);
  });

  it('lets the requests under way finish, refuses new ones, and crashes nothing', async () => {
    const dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, 'stop-test');
    process.on('uncaughtException', record);
    // A client of its own, as the functions have: the table's own client is destroyed by stop().
    const client = localDynamoClient(dynamo.endpoint);
    const puts = Array.from({ length: 300 }, (_, i) =>
      client
        .send(
          new PutItemCommand({
            TableName: 'stop-test',
            Item: { pk: { S: `p${i}` }, sk: { S: 's' }, blob: { S: 'x'.repeat(2_000) } },
          }),
        )
        .then(
          () => 'stored',
          (err: Error) => err.name,
        ),
    );
    // Stop while they are being worked on: after the first answers, before the last.
    await vi.waitFor(() => expect(dynamo.usage().requests).toBeGreaterThan(20), { timeout: 10_000, interval: 1 });
    await dynamo.stop();
    const outcomes = await Promise.all(puts);
    client.destroy();
    // Give any callback still queued inside dynalite the chance to throw.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(uncaught).toEqual([]);
    expect(outcomes.length).toBe(300);
  });
});
