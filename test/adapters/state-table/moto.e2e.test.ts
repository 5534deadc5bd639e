import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import { auditRecordsSuite } from './audit-records.suite.ts';
import { useMoto } from './backends.ts';
import { probeRecordsSuite } from './probe-records.suite.ts';
import { rolloutStateSuite } from './rollout-state.suite.ts';
import { stateTableSuite } from './state-table.suite.ts';

/**
 * The state table's suites, written once (*.suite.ts) and run on dynalite by the *.test.ts files beside this
 * one, here on moto's DynamoDB: a second implementation to judge the adapter by, started once for the file.
 */
const moto = useMoto();

describe('state table on moto', () => stateTableSuite(moto));
describe('rollout state on moto', () => rolloutStateSuite(moto));
describe('probe records on moto', () => probeRecordsSuite(moto));
describe('audit records on moto', () => auditRecordsSuite(moto));

describe("moto's known gaps (backends.ts), still there", () => {
  it('consumed-write-units: every UpdateItem reports 0.5 units, whatever the size of the item', async () => {
    const { client } = moto();
    await ensureTable(client, 'gaps');
    const unitsToWrite = async (bytes: number) =>
      (
        await client.send(
          new UpdateItemCommand({
            TableName: 'gaps',
            Key: { pk: { S: 'gap' }, sk: { S: String(bytes) } },
            UpdateExpression: 'SET v = :v',
            ExpressionAttributeValues: { ':v': { S: 'x'.repeat(bytes) } },
            ReturnConsumedCapacity: 'TOTAL',
          }),
        )
      ).ConsumedCapacity?.CapacityUnits;
    // DynamoDB would report 1 unit for the small item and 3 for the one of 2.5 KB.
    expect([await unitsToWrite(10), await unitsToWrite(2_500)]).toEqual([0.5, 0.5]);
  });
});
