/**
 * A DynamoDB endpoint that knows one table exists and holds nothing: DescribeTable answers ACTIVE, reads
 * find no items, writes succeed. For driving CLI argument validation fast (dynalite costs tens of ms per
 * request), never for testing storage behaviour.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeDynamo {
  endpoint: string;
  requests: number;
  stop(): Promise<void>;
}

export async function startFakeDynamo(tableName: string): Promise<FakeDynamo> {
  const state = { requests: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests++;
      const op = String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop();
      let body: unknown = {};
      if (op === 'DescribeTable') body = { Table: { TableName: tableName, TableStatus: 'ACTIVE', ItemCount: 0 } };
      else if (op === 'Query' || op === 'Scan') body = { Items: [], Count: 0, ScannedCount: 0 };
      const text = JSON.stringify(body);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
