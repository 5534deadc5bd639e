/**
 * Flags every command that reads or writes the state table shares. Defaults come from the environment so
 * a shell set up once (`export SPIRITCTL_DYNAMO_ENDPOINT=...` printed by `spiritctl local up`) needs no flags.
 */
import type { OptionSpec } from '../command.ts';
import type { StateTable } from '../../adapters/state-table/index.ts';

export const DEFAULT_LOCAL_TABLE = 'pool-spirit-local-state';

export const stateTableFlags: Record<string, OptionSpec> = {
  'dynamo-endpoint': {
    type: 'string',
    valueName: 'URL',
    description: 'DynamoDB endpoint of the local stack (env SPIRITCTL_DYNAMO_ENDPOINT); unset: AWS DynamoDB with your AWS credentials',
  },
  table: {
    type: 'string',
    valueName: 'NAME',
    description: `state table name (env STATE_TABLE_NAME, else ${DEFAULT_LOCAL_TABLE}, the local stack's)`,
  },
};

export const STATE_TABLE_DETAILS = `
State table: --dynamo-endpoint (or SPIRITCTL_DYNAMO_ENDPOINT) points at the local stack's DynamoDB, which
\`spiritctl local up\` prints ("dynalite http://127.0.0.1:PORT"); without it the AWS SDK's default
credentials and region reach the cloud table named by --table (or STATE_TABLE_NAME).`;

/** Opens the table the flags name; the caller destroys the client when done. */
export async function openStateTable(values: Record<string, unknown>): Promise<{ table: StateTable; close(): void }> {
  const endpoint = (values['dynamo-endpoint'] as string | undefined) ?? process.env.SPIRITCTL_DYNAMO_ENDPOINT;
  const tableName = (values.table as string | undefined) ?? process.env.STATE_TABLE_NAME ?? DEFAULT_LOCAL_TABLE;
  const { createStateTable } = await import('../../adapters/state-table/index.ts');
  let client;
  if (endpoint) {
    if (!/^https?:\/\/[^/]+/.test(endpoint)) throw new (await import('../command.ts')).UsageError(`--dynamo-endpoint must be an http(s) URL, got "${endpoint}"`);
    const { localDynamoClient } = await import('../../local/dynamodb.ts');
    client = localDynamoClient(endpoint);
  } else {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    client = new DynamoDBClient({});
  }
  return { table: createStateTable({ client, tableName }), close: () => client.destroy() };
}
