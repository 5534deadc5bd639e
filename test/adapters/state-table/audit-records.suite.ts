import { beforeAll, describe, expect, it } from 'vitest';
import {
  AUDIT_RETENTION_MS,
  clusterAuditHistory,
  createStateTable,
  getItem,
  keys,
  latestClusterAudit,
  meteredTable,
  putClusterAudit,
  type StateTable,
  TTL_ATTRIBUTE,
} from '../../../adapters/state-table/index.ts';
import { putItem } from '../../../adapters/state-table/table.ts';
import type { AuditRecord, Finding, PoolHealth } from '../../../core/audit/index.ts';
import { ensureTable } from '../../../dev/local/dynamodb.ts';
import type { BackendRef } from './backends.ts';

const t0 = new Date('2026-05-01T00:00:00Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

const pools = (n: number): PoolHealth[] =>
  Array.from({ length: n }, (_, i) => ({
    pool: `pool-${String(i).padStart(3, '0')}`,
    health: 'healthy',
    phase: 'Running',
    available: true,
    leader: { holder: `pool-${i}-node-0`, renewTime: iso(-1), transitions: 2 },
    etcd: { dbSizeBytes: 40 * 2 ** 20, quotaBackendBytes: 512 * 2 ** 20, alarms: [] },
    findings: 0,
  }));
const orphan: Finding = {
  severity: 'warning',
  kind: 'orphan',
  cluster: 'c1',
  pool: 'gone',
  fixable: false,
  reason: 'ConfigMap ns/ps-gone-bootstrap belongs to pool gone, which has no NodePool',
};

function full(cluster: string, minutes: number, n = 3): AuditRecord {
  return {
    cluster,
    runId: `run-${minutes}`,
    at: iso(minutes),
    durationMs: 30,
    findings: [orphan],
    pools: pools(n),
    requested: [],
    openYurt: { nodePoolApiVersion: 'apps.openyurt.io/v1beta2', nodePoolVersions: ['v1beta2', 'v1beta1'] },
    digest: 'd1',
  };
}

/** What a run that found the record of `since` again stores. */
const note = (cluster: string, minutes: number, since: number): AuditRecord => ({
  ...full(cluster, minutes),
  runId: `run-${minutes}`,
  durationMs: 20,
  unchangedSince: iso(since),
});

/** Audit records in the state table, on a DynamoDB implementation (./backends.ts). */
export function auditRecordsSuite(backend: BackendRef): void {
  let table: StateTable;
  beforeAll(async () => {
    await ensureTable(backend().client, 'audits');
    table = createStateTable({ client: backend().client, tableName: 'audits' });
  });

  describe('audit records and the notes that repeat them', () => {
    it('stores a note in one write unit, whatever the size of the record it names', async () => {
      const metered = meteredTable(table);
      await putClusterAudit(metered.table, full('big', 0, 40), at(0));
      const fullUnits = metered.writeUnits();
      await putClusterAudit(metered.table, { ...note('big', 10, 0), pools: pools(40) }, at(10));
      if (!backend.gaps.has('consumed-write-units')) expect(fullUnits).toBeGreaterThan(5);
      expect(metered.writeUnits() - fullUnits).toBe(1);
      const stored = await getItem(table, keys.clusterAudit('big', at(10)));
      expect(Object.keys(stored ?? {}).sort()).toEqual(
        ['at', 'cluster', 'digest', 'durationMs', 'pk', 'runId', 'sk', 'unchangedSince', TTL_ATTRIBUTE].sort(),
      );
      // A note never outlives the record it names.
      const named = await getItem(table, keys.clusterAudit('big', at(0)));
      expect(stored?.[TTL_ATTRIBUTE]).toBeLessThanOrEqual(named?.[TTL_ATTRIBUTE] as number);
    });

    it('reads the latest run and the history as whole records: a note is the record it names, with its own run', async () => {
      await putClusterAudit(table, full('c1', 0), at(0));
      await putClusterAudit(table, note('c1', 10, 0), at(10));
      await putClusterAudit(table, note('c1', 20, 0), at(20));
      const latest = await latestClusterAudit(table, 'c1', at(21));
      expect(latest).toMatchObject({
        runId: 'run-20',
        at: iso(20),
        durationMs: 20,
        findings: [orphan],
        pools: pools(3),
        openYurt: full('c1', 0).openYurt,
        digest: 'd1',
        unchangedSince: iso(0),
      });
      const history = await clusterAuditHistory(table, 'c1', at(-5), at(21));
      expect(history.map((r) => [r.runId, r.at, r.unchangedSince, r.pools.length])).toEqual([
        ['run-0', iso(0), undefined, 3],
        ['run-10', iso(10), iso(0), 3],
        ['run-20', iso(20), iso(0), 3],
      ]);
    });

    it('fetches the named record when it is older than the history asked for', async () => {
      await putClusterAudit(table, full('c2', 0), at(0));
      await putClusterAudit(table, note('c2', 600, 0), at(600));
      await putClusterAudit(table, note('c2', 610, 0), at(610));
      const history = await clusterAuditHistory(table, 'c2', at(540), at(611));
      expect(history.map((r) => [r.runId, r.unchangedSince, r.pools.map((p) => p.leader?.holder)])).toEqual([
        ['run-600', iso(0), ['pool-0-node-0', 'pool-1-node-0', 'pool-2-node-0']],
        ['run-610', iso(0), ['pool-0-node-0', 'pool-1-node-0', 'pool-2-node-0']],
      ]);
    });

    it('leaves out a note whose record is gone, and reads records stored before notes existed', async () => {
      // As the audit stored records before: no digest, no OpenYurt, no note.
      const { digest: _d, openYurt: _o, ...old } = full('c3', 0);
      await putItem(table, {
        Item: { ...keys.clusterAudit('c3', at(0)), ...old, [TTL_ATTRIBUTE]: Math.ceil(at(0).getTime() / 1000) + 3600 },
      });
      expect(await latestClusterAudit(table, 'c3', at(1))).toEqual({ ...old });
      await putClusterAudit(table, note('c3', 10, 0), at(10));
      expect((await latestClusterAudit(table, 'c3', at(11)))?.runId).toBe('run-10');
      // Past the old record's expiry: the note that names it reads as nothing.
      expect(await latestClusterAudit(table, 'c3', at(61))).toBeUndefined();
      expect(await clusterAuditHistory(table, 'c3', at(-5), at(61))).toEqual([]);
      // A note's own expiry counts from the record it names.
      const stored = await getItem(table, keys.clusterAudit('c3', at(10)));
      expect(stored?.[TTL_ATTRIBUTE]).toBe(Math.ceil((at(0).getTime() + AUDIT_RETENTION_MS) / 1000));
    });
  });
}
