/**
 * Every request the local API served, so tests and benchmarks can assert what a client did
 * ("a no-op reconcile makes zero writes") without a proxy in between.
 */

export interface RequestRecord {
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, or the HTTP method lowercased for non-resource paths. */
  verb: string;
  method: string;
  path: string;
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  status: number;
  userAgent: string;
  fieldManager?: string;
  dryRun?: boolean;
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
}

export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface WriteFilter {
  resource?: string;
  namespace?: string;
  userAgent?: string | RegExp;
  fieldManager?: string;
  /** Count only requests that succeeded (2xx). Default false: every write attempt counts. */
  successfulOnly?: boolean;
}

export class RequestLog {
  private records: RequestRecord[] = [];
  /** Sequence number of records[0]: marks stay valid after old records are trimmed. */
  private base = 0;
  private readonly limit: number;

  constructor(limit = 100_000) {
    this.limit = limit;
  }

  add(rec: RequestRecord): void {
    this.records.push(rec);
    if (this.records.length > this.limit * 1.5) {
      const drop = this.records.length - this.limit;
      this.records = this.records.slice(drop);
      this.base += drop;
    }
  }

  /** A position in the log; pass it to since()/writesSince() to see only later requests. */
  mark(): number {
    return this.base + this.records.length;
  }

  since(mark = 0): RequestRecord[] {
    return this.records.slice(Math.max(0, mark - this.base));
  }

  /** Write requests (create/update/patch/delete/deletecollection) since a mark; dry runs excluded. */
  writesSince(mark = 0, filter: WriteFilter = {}): RequestRecord[] {
    return this.since(mark).filter((r) => {
      if (!WRITE_VERBS.has(r.verb) || r.dryRun) return false;
      if (filter.successfulOnly && (r.status < 200 || r.status >= 300)) return false;
      if (filter.resource !== undefined && r.resource !== filter.resource) return false;
      if (filter.namespace !== undefined && r.namespace !== filter.namespace) return false;
      if (filter.fieldManager !== undefined && r.fieldManager !== filter.fieldManager) return false;
      if (filter.userAgent !== undefined) {
        if (
          typeof filter.userAgent === 'string' ? r.userAgent !== filter.userAgent : !filter.userAgent.test(r.userAgent)
        )
          return false;
      }
      return true;
    });
  }

  countWritesSince(mark = 0, filter: WriteFilter = {}): number {
    return this.writesSince(mark, filter).length;
  }

  clear(): void {
    this.base += this.records.length;
    this.records = [];
  }
}
