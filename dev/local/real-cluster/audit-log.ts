/**
 * What a client did to the real kube-apiserver, read from the apiserver's own audit log: the judge of
 * "a converged pool costs zero writes" when the server is the real one. The local API keeps a request log
 * of its own (dev/local/kube-api/server/request-log.ts); this gives the same records from the audit
 * events kube-apiserver writes (audit.k8s.io/v1, one JSON object per line, level Metadata: no bodies, so
 * no Secret data ever reaches the file).
 *
 * The log backend writes an event after the handler returns, so a response can reach the client a moment
 * before its event reaches the file. Reads therefore end with a fence: a request of the reader's own, and
 * wait until its event is in the file; every request the client finished before the fence was sent is
 * written by then.
 */
import { randomUUID } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestRecord } from '../kube-api/server/request-log.ts';
import { WRITE_VERBS } from '../kube-api/server/request-log.ts';

/** Every request at level Metadata, one event per request (when its response completed). */
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
`;

/** kube-apiserver's flags for an audit log at `<dir>/audit.log`; writes the policy file they name. */
export async function auditLogArgs(dir: string): Promise<{ args: string[]; path: string }> {
  const policy = join(dir, 'audit-policy.yaml');
  const path = join(dir, 'audit.log');
  await writeFile(policy, POLICY);
  return {
    args: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${path}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
      '--audit-log-maxbackup=0',
    ],
    path,
  };
}

/** The part of an audit.k8s.io/v1 Event this reader uses. */
interface AuditEvent {
  stage?: string;
  requestURI?: string;
  verb?: string;
  user?: { username?: string; groups?: string[] };
  annotations?: Record<string, string>;
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; subresource?: string };
  responseStatus?: { code?: number; message?: string };
  requestReceivedTimestamp?: string;
}

export interface AuditRecord extends RequestRecord {
  /** The authenticated user (a client certificate's CN, a ServiceAccount's name) and its groups. */
  user: string;
  groups: string[];
  /** The authorizer's word: `authorization.k8s.io/decision` (allow, forbid) and `…/reason` (which binding allowed it). */
  decision?: string;
  reason?: string;
  /** The Status message of a failed request (a 403's `... is forbidden: User ... cannot ...`). */
  message?: string;
}

/** Sends the fence request: any request whose URI carries `marker`. */
export type FenceRequest = (marker: string) => Promise<unknown>;

export class AuditRequestLog {
  private readonly records: AuditRecord[] = [];
  private offset = 0;
  private partial = '';
  private readonly path: string;
  private readonly fence: FenceRequest;
  private readonly keep: (record: AuditRecord) => boolean;

  /**
   * `keep`: a user's name keeps that user's requests only (the client under test), a function whatever it
   * accepts; the fence requests are never kept.
   */
  constructor(path: string, fence: FenceRequest, keep: string | ((record: AuditRecord) => boolean)) {
    this.path = path;
    this.fence = fence;
    this.keep = typeof keep === 'string' ? (r) => r.user === keep : keep;
  }

  /** A position in the log: every request finished before the call is before it. */
  async mark(): Promise<number> {
    await this.sync();
    return this.records.length;
  }

  async since(mark = 0): Promise<AuditRecord[]> {
    await this.sync();
    return this.records.slice(mark);
  }

  /** Writes (create/update/patch/delete/deletecollection) since a mark; dry runs excluded. */
  async writesSince(mark = 0): Promise<AuditRecord[]> {
    return (await this.since(mark)).filter((r) => WRITE_VERBS.has(r.verb) && !r.dryRun);
  }

  /** Reads the file up to the event of a fresh fence request. */
  private async sync(): Promise<void> {
    const marker = `audit-fence-${randomUUID()}`;
    await this.fence(marker);
    const deadline = Date.now() + 10_000;
    while (!(await this.readNew(marker))) {
      if (Date.now() > deadline) throw new Error(`audit log ${this.path}: the fence ${marker} was never written`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Parses what the file gained since the last read; true once the fence's event was among it. */
  private async readNew(marker: string): Promise<boolean> {
    const file = await open(this.path, 'r');
    let text: string;
    try {
      const { size } = await file.stat();
      if (size <= this.offset) return false;
      const buf = Buffer.alloc(size - this.offset);
      await file.read(buf, 0, buf.length, this.offset);
      this.offset = size;
      text = this.partial + buf.toString('utf8');
    } finally {
      await file.close();
    }
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    let fenced = false;
    for (const line of lines) {
      if (!line) continue;
      const event = JSON.parse(line) as AuditEvent;
      if (event.requestURI?.includes('audit-fence-')) fenced ||= event.requestURI.includes(marker);
      else {
        const record = toRecord(event);
        if (this.keep(record)) this.records.push(record);
      }
    }
    return fenced;
  }
}

/** The HTTP method behind a resource verb (the audit event names the verb only). */
const METHOD_OF_VERB: Record<string, string> = {
  get: 'GET',
  list: 'GET',
  watch: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETE',
};

function toRecord(e: AuditEvent): AuditRecord {
  const uri = new URL(e.requestURI ?? '/', 'https://apiserver');
  const ref = e.objectRef;
  return {
    verb: e.verb ?? '',
    method: METHOD_OF_VERB[e.verb ?? ''] ?? (e.verb ?? '').toUpperCase(),
    path: uri.pathname,
    resource: ref?.resource,
    group: ref?.apiGroup,
    namespace: ref?.namespace,
    name: ref?.name,
    subresource: ref?.subresource,
    status: e.responseStatus?.code ?? 0,
    userAgent: e.userAgent ?? '',
    fieldManager: uri.searchParams.get('fieldManager') ?? undefined,
    dryRun: uri.searchParams.has('dryRun') || undefined,
    at: Date.parse(e.requestReceivedTimestamp ?? '') || 0,
    user: e.user?.username ?? '',
    groups: e.user?.groups ?? [],
    decision: e.annotations?.['authorization.k8s.io/decision'],
    reason: e.annotations?.['authorization.k8s.io/reason'],
    message: e.responseStatus?.message,
  };
}
