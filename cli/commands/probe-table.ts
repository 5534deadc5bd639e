/** The state-table flags the probe commands share: `--table NAME [--dynamo-endpoint URL]`. */
import { UsageError, type OptionSpec } from '../command.ts';
import type { StateTable } from '../../adapters/state-table/table.ts';

export const tableOptions: Record<string, OptionSpec> = {
  table: { type: 'string', description: 'state table name (the local stack uses pool-spirit-local-state)', valueName: 'NAME' },
  'dynamo-endpoint': { type: 'string', description: 'DynamoDB endpoint of a local stack (dynalite); AWS when omitted', valueName: 'URL' },
};

/** The table the flags name, or undefined when none is named. A local endpoint gets the table created. */
export async function tableFromFlags(values: Record<string, unknown>, options: { create: boolean }): Promise<{ table: StateTable; close(): void } | undefined> {
  const name = values.table === undefined ? undefined : String(values.table);
  const endpoint = values['dynamo-endpoint'] === undefined ? undefined : String(values['dynamo-endpoint']);
  if (endpoint !== undefined && name === undefined) throw new UsageError('--dynamo-endpoint needs --table NAME');
  if (name === undefined) return undefined;
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(name)) throw new UsageError(`--table must be a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -), got "${name}"`);
  const { createStateTable } = await import('../../adapters/state-table/table.ts');
  if (endpoint !== undefined) {
    if (!/^https?:\/\/[^/\s]+/.test(endpoint)) throw new UsageError(`--dynamo-endpoint must be an http(s) URL, got "${endpoint}"`);
    const { ensureTable, localDynamoClient } = await import('../../local/dynamodb.ts');
    const client = localDynamoClient(endpoint);
    if (options.create) await ensureTable(client, name);
    return { table: createStateTable({ client, tableName: name }), close: () => client.destroy() };
  }
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const client = new DynamoDBClient({});
  return { table: createStateTable({ client, tableName: name }), close: () => client.destroy() };
}
