/**
 * Flags every command that reads or writes the state table shares. Defaults come from the environment so
 * a shell set up once (`export SPIRITCTL_DYNAMO_ENDPOINT=...` printed by `spiritctl local up`) needs no flags.
 */

import type { StateTable } from '../../adapters/state-table/index.ts';
import type { OptionSpec } from '../command.ts';

export const DEFAULT_LOCAL_TABLE = 'pool-spirit-local-state';

export const stateTableFlags: Record<string, OptionSpec> = {
  'dynamo-endpoint': {
    type: 'string',
    valueName: 'URL',
    description:
      'DynamoDB endpoint of the local stack (env SPIRITCTL_DYNAMO_ENDPOINT); unset: AWS DynamoDB with your AWS credentials',
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

/** True when a table was named by a flag or the environment (for commands where storing is optional). */
export function stateTableRequested(values: Record<string, unknown>): boolean {
  return [
    values['dynamo-endpoint'],
    values.table,
    process.env.SPIRITCTL_DYNAMO_ENDPOINT,
    process.env.STATE_TABLE_NAME,
  ].some((v) => v !== undefined);
}

/**
 * Opens the table the flags name; the caller destroys the client when done. With `createIfLocal`, a table
 * missing from a local endpoint is created (a fresh dynalite has none).
 */
export async function openStateTable(
  values: Record<string, unknown>,
  options: { createIfLocal?: boolean } = {},
): Promise<{ table: StateTable; tableName: string; close(): void }> {
  const { UsageError } = await import('../command.ts');
  // An empty --dynamo-endpoint is a mistake to report, not "unset" (which would silently mean AWS).
  const endpoint =
    values['dynamo-endpoint'] !== undefined
      ? String(values['dynamo-endpoint'])
      : process.env.SPIRITCTL_DYNAMO_ENDPOINT || undefined;
  const tableName = (values.table as string | undefined) ?? process.env.STATE_TABLE_NAME ?? DEFAULT_LOCAL_TABLE;
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(tableName))
    throw new UsageError(`--table must be a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -), got "${tableName}"`);
  const { createStateTable } = await import('../../adapters/state-table/index.ts');
  let client: import('@aws-sdk/client-dynamodb').DynamoDBClient;
  if (endpoint !== undefined) {
    if (!/^https?:\/\/[^/\s]+/.test(endpoint))
      throw new UsageError(`--dynamo-endpoint must be an http(s) URL, got "${endpoint}"`);
    const { ensureTable, localDynamoClient } = await import('../../dev/local/dynamodb.ts');
    client = localDynamoClient(endpoint);
    if (options.createIfLocal) await ensureTable(client, tableName);
    else if (!(await localTableExists(client, tableName))) {
      client.destroy();
      throw new UsageError(`there is no table "${tableName}" at ${endpoint}; name the state table with --table NAME`);
    }
  } else {
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    client = new DynamoDBClient({});
  }
  return { table: createStateTable({ client, tableName }), tableName, close: () => client.destroy() };
}

async function localTableExists(
  client: import('@aws-sdk/client-dynamodb').DynamoDBClient,
  name: string,
): Promise<boolean> {
  const { DescribeTableCommand, ResourceNotFoundException } = await import('@aws-sdk/client-dynamodb');
  try {
    await client.send(new DescribeTableCommand({ TableName: name }));
    return true;
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return false;
    throw err;
  }
}
