/**
 * Request-unit metering of the local DynamoDB, the way on-demand DynamoDB bills: every item operation that
 * reaches dynalite is counted with the read or write request units it consumed. dynalite computes the
 * units itself (1 KB per write unit, 4 KB per read unit, eventually consistent reads at half) when a
 * request asks for ReturnConsumedCapacity, so the meter asks on every request and reads the answer; the
 * caller sees the same response it would have had plus a ConsumedCapacity field the SDK ignores unless asked.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** What the table consumed, per operation name (PutItem, Query, …). */
export interface TableUsage {
  readRequestUnits: number;
  writeRequestUnits: number;
  requests: number;
  byOperation: Record<string, { requests: number; readRequestUnits: number; writeRequestUnits: number }>;
}

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

export class TableUsageMeter {
  private usage: TableUsage = { readRequestUnits: 0, writeRequestUnits: 0, requests: 0, byOperation: {} };

  snapshot(): TableUsage {
    return structuredClone(this.usage);
  }

  record(operation: string, units: number): void {
    const isRead = READS.has(operation);
    this.usage.byOperation[operation] ??= { requests: 0, readRequestUnits: 0, writeRequestUnits: 0 };
    const op = this.usage.byOperation[operation];
    op.requests += 1;
    this.usage.requests += 1;
    if (isRead) {
      op.readRequestUnits += units;
      this.usage.readRequestUnits += units;
    } else {
      op.writeRequestUnits += units;
      this.usage.writeRequestUnits += units;
    }
  }

  /** Wraps dynalite's request listener: item operations are metered, everything else passes through untouched. */
  wrap(inner: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      if (req.method !== 'POST' || !(READS.has(operation) || WRITES.has(operation))) return inner(req, res);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body = Buffer.concat(chunks);
        try {
          const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
          parsed.ReturnConsumedCapacity = 'TOTAL';
          body = Buffer.from(JSON.stringify(parsed));
        } catch {
          // Not JSON: dynalite answers it with its own SerializationException; nothing to meter.
        }
        const replay = Object.assign(Readable.from([body]), {
          headers: { ...req.headers, 'content-length': String(body.length) },
          method: req.method,
          url: req.url,
        }) as unknown as IncomingMessage;
        const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
        (res as { end: (...a: unknown[]) => ServerResponse }).end = (...args: unknown[]) => {
          this.meterResponse(operation, res.statusCode, args[0]);
          return end(...args);
        };
        inner(replay, res);
      });
    };
  }

  private meterResponse(operation: string, status: number, body: unknown): void {
    if (typeof body !== 'string' && !Buffer.isBuffer(body)) return;
    let parsed: { ConsumedCapacity?: unknown; __type?: string };
    try {
      parsed = JSON.parse(body.toString()) as typeof parsed;
    } catch {
      return;
    }
    if (status !== 200) {
      // A write whose condition failed still consumes (at least) one write unit in DynamoDB.
      if (WRITES.has(operation) && String(parsed.__type ?? '').endsWith('ConditionalCheckFailedException'))
        this.record(operation, 1);
      return;
    }
    const consumed = parsed.ConsumedCapacity;
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    const units = list.reduce((n: number, c) => n + Number((c as { CapacityUnits?: number }).CapacityUnits ?? 0), 0);
    this.record(operation, units);
  }
}
