/**
 * The invariants, checked every few seconds while the soak runs and once more after it has quiesced.
 * A condition that is bad only counts once its bound has passed since the later of: when it was first
 * seen bad, the end of the last global fault, and the soak's last change to that pool.
 */
import { webcrypto } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { LEASE_OWNER, LEASE_UNTIL } from '../../adapters/state-table/lease.ts';
import type { Item } from '../../adapters/state-table/table.ts';
import { OPT_OUT_ANNOTATION } from '../../core/nodepool.ts';
import { PemConverter } from '../../shared/x509.ts';
import {
  type KnownSecret,
  privateKeysInPem,
  SecretScanner,
  secretObjectSecrets,
} from '../../test/support/secret-scan.ts';
import { localApiOf } from '../local/fleet/fleet.ts';
import { evictionGraceSeconds } from '../local/kubelet/scheduling.ts';
import { type ClusterView, isAvailable, isReady, type Obj, ownedPool, poolOf, readCluster } from './cluster-view.ts';
import type { TextTap } from './text-tap.ts';
import { BOUNDS, type SoakWorld } from './world.ts';

export const FOREIGN_CONTAINER = 'soak-sidecar';
export const FOREIGN_PORT = 'soak-extra';

interface Episode {
  since: number;
  reported: boolean;
}

export class Invariants {
  readonly #w: SoakWorld;
  readonly #tap: TextTap;
  readonly #episodes = new Map<string, Episode>();
  /** Leases held past their bound at the last pass, already reported. */
  #staleLeases = new Set<string>();
  #deadLettersSeen = 0;
  #known: KnownSecret[] = [];
  #knownIds = new Set<string>();
  #scanner = new SecretScanner([]);
  #caKeys = new WeakSet<object>();
  #pass = 0;
  /** The table as the last pass read it (evidence: a stuck pool's reconcile state). */
  #items: Item[] = [];
  readonly rss = { maxMb: 0, firstMb: 0, lastMb: 0 };

  constructor(w: SoakWorld, tap: TextTap) {
    this.#w = w;
    this.#tap = tap;
  }

  /** The bus is new after a stack restart: its dead letters are counted from the start again. */
  busReplaced(): void {
    this.#deadLettersSeen = 0;
  }

  /** One pass over every invariant; returns whether the fleet is whole (nothing bad at all right now). */
  async check(final = false): Promise<boolean> {
    const w = this.#w;
    this.#pass++;
    const seen = new Set<string>();
    let whole = true;
    for (const c of w.fleet.clusters) {
      const view = await readCluster(localApiOf(c).storage);
      whole = this.#pools(c.id, view, seen, final) && whole;
      await this.#learnSecrets(c.id, view);
    }
    for (const key of [...this.#episodes.keys()]) if (!seen.has(key)) this.#episodes.delete(key);
    await this.#leases(final);
    this.#deadLetters();
    await this.#secrets(final || this.#pass % 5 === 0);
    this.#memory();
    return whole;
  }

  #count(name: string): void {
    this.#w.checks[name] = (this.#w.checks[name] ?? 0) + 1;
  }

  /** Tracks a bad condition; reports it once when it has outlived its bound. Returns false (not whole). */
  #bad(
    key: string,
    seen: Set<string>,
    boundMs: number,
    disturbedAt: number,
    final: boolean,
    report: () => [string, string, Record<string, unknown>],
  ): false {
    const w = this.#w;
    seen.add(key);
    const now = Date.now();
    const ep = this.#episodes.get(key) ?? { since: now, reported: false };
    this.#episodes.set(key, ep);
    const start = Math.max(ep.since, w.calmSince, disturbedAt);
    if (!ep.reported && (final || (w.activeFaults === 0 && now - start > boundMs))) {
      ep.reported = true;
      const [invariant, what, evidence] = report();
      w.violate(invariant, what, { ...evidence, badForMs: now - ep.since, sinceCalmMs: now - start, boundMs });
    }
    return false;
  }

  #pools(clusterId: string, view: ClusterView, seen: Set<string>, final: boolean): boolean {
    const w = this.#w;
    let whole = true;
    const readyPools = new Set(view.nodes.filter(isReady).map(poolOf).filter(Boolean));
    const livePools = new Set(
      view.pools.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata.name as string),
    );
    const wanted = new Set(view.pools.filter((p) => wantsSpirit(p)).map((p) => p.metadata.name as string));
    const spirits = new Map(view.spirits.map((s) => [s.metadata.name as string, s]));
    for (const pool of wanted) {
      this.#count('available');
      const key = `${clusterId}/${pool}`;
      if (!readyPools.has(pool) || w.invalidSpec.has(key)) continue;
      const spirit = spirits.get(pool);
      if (spirit && isAvailable(spirit)) continue;
      // A pod on a node that went NotReady is evicted only after its toleration (core/render/workload.ts):
      // the pool's bound starts then, not when the node went away.
      const startsAt = Math.max(w.disturbed.get(key) ?? 0, evictionDue(view, pool));
      whole = this.#bad(`available ${key}`, seen, BOUNDS.availableMs, startsAt, final, () => [
        'available',
        `Edge pool ${key} has a Ready node but its PoolSpirit is not Available`,
        {
          phase: spirit?.status?.phase ?? 'no PoolSpirit',
          conditions: (spirit?.status?.conditions ?? []).map(
            (c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${String(c.message ?? '').slice(0, 200)}`,
          ),
          nodes: view.nodes
            .filter((n) => poolOf(n) === pool)
            .map((n) => `${n.metadata.name} ${isReady(n) ? 'Ready' : 'NotReady'}`),
          pods: view.pods
            .filter((p) => p.metadata.labels?.['app.kubernetes.io/instance'] === `ps-${pool}`)
            .map(podSummary),
          recent: w.journal.recent(clusterId, pool),
          reconcileState: this.#state(clusterId, pool),
          deployment: view.owned
            .filter((o) => o.kind === 'Deployment' && ownedPool(o.obj) === pool)
            .map((o) => ({ generation: o.obj.metadata.generation, status: o.obj.status })),
        },
      ]);
    }
    for (const { kind, obj } of view.owned) {
      this.#count('orphans');
      const pool = ownedPool(obj);
      if (!pool) continue;
      const key = `${clusterId}/${pool}`;
      if (!livePools.has(pool) || !wanted.has(pool)) {
        const deletedAt = w.deletions.get(key);
        const invariant = deletedAt !== undefined ? 'lost-deletion' : 'orphan';
        whole =
          this.#bad(
            `${invariant} ${key} ${kind}/${obj.metadata.name}`,
            seen,
            BOUNDS.deletionMs,
            deletedAt ?? 0,
            final,
            () => [
              invariant,
              `${kind} ${obj.metadata.name} of ${deletedAt !== undefined ? 'deleted' : 'absent'} NodePool ${key} still exists`,
              {
                recent: w.journal.recent(clusterId, pool),
                kind,
                name: obj.metadata.name,
                deletionTimestamp: obj.metadata.deletionTimestamp ?? null,
                ownerReferences: obj.metadata.ownerReferences ?? [],
              },
            ],
          ) && whole;
      }
      this.#count('foreign');
      const foreign = foreignEntry(kind, obj);
      if (foreign) {
        whole =
          this.#bad(
            `foreign ${clusterId} ${kind}/${obj.metadata.name}`,
            seen,
            BOUNDS.foreignMs,
            w.disturbed.get(key) ?? 0,
            final,
            () => [
              'foreign',
              `${foreign} survives in ${kind} ${obj.metadata.name} (${clusterId})`,
              {
                reconcileState: this.#state(clusterId, pool),
                kind,
                name: obj.metadata.name,
                managedFields: (obj.metadata.managedFields ?? []).map((m) => `${m.manager} ${m.operation} ${m.time}`),
                recent: w.journal.recent(clusterId, pool),
              },
            ],
          ) && whole;
      }
    }
    for (const spirit of view.spirits) {
      const pool = spirit.metadata.name as string;
      const key = `${clusterId}/${pool}`;
      if (livePools.has(pool) && wanted.has(pool)) continue;
      const deletedAt = w.deletions.get(key);
      const invariant = deletedAt !== undefined ? 'lost-deletion' : 'orphan';
      whole =
        this.#bad(`${invariant} ${key} PoolSpirit`, seen, BOUNDS.deletionMs, deletedAt ?? 0, final, () => [
          invariant,
          `PoolSpirit ${key} outlives its NodePool`,
          { deletionTimestamp: spirit.metadata.deletionTimestamp ?? null },
        ]) && whole;
    }
    return whole;
  }

  #state(clusterId: string, pool: string): Record<string, unknown> | undefined {
    const item = this.#items.find((i) => i.pk === `CLUSTER#${clusterId}` && i.sk === `POOL#${pool}`);
    if (!item) return undefined;
    const { outcome, failures, lastError, error, updatedAt, attempts, recentEvents, fencingToken } = item;
    return {
      outcome,
      failures,
      error: lastError ?? error,
      updatedAt,
      attempts,
      recentEvents,
      fencingToken,
      leaseOwner: item[LEASE_OWNER],
      leaseUntil: item[LEASE_UNTIL],
    };
  }

  async #leases(final: boolean): Promise<void> {
    const w = this.#w;
    const items = await scanTable(w);
    this.#items = items;
    const now = Date.now();
    const stale = new Set<string>();
    for (const item of items) {
      this.#count('leases');
      const until = Number(item[LEASE_UNTIL]);
      if (item[LEASE_OWNER] === undefined || !(until < now - BOUNDS.leaseGraceMs)) continue;
      const key = `lease ${item.pk}/${item.sk}`;
      stale.add(key);
      if (this.#staleLeases.has(key)) continue;
      w.violate(
        'lease',
        `lease on ${item.pk}/${item.sk} is still held ${Math.round((now - until) / 1000)} s past its expiry`,
        { owner: String(item[LEASE_OWNER]).slice(0, 80), leaseUntil: new Date(until).toISOString(), final },
      );
    }
    // One violation per stale lease for as long as it stays stale (it was reported again on every pass).
    this.#staleLeases = stale;
    this.#tap.add('table items', JSON.stringify(items));
  }

  #deadLetters(): void {
    const w = this.#w;
    const letters = w.fleet.bus.deadLetters();
    for (const dl of letters.slice(this.#deadLettersSeen)) {
      this.#count('dead-letters');
      this.#tap.add(`dead letter ${dl.eventId}`, JSON.stringify(dl));
      const detail = (dl.event?.detail ?? {}) as Record<string, unknown>;
      const clusterId = typeof detail.clusterId === 'string' ? detail.clusterId : undefined;
      const terminalInput = clusterId !== undefined && w.terminalClusters.has(clusterId);
      const reason = dl.terminal?.message ?? dl.error;
      if (!reason)
        w.violate('dead-letter', `dead letter ${dl.eventId} (${dl.target}) carries no reason`, {
          rule: dl.rule,
          reason: dl.reason,
        });
      if (!terminalInput) {
        w.violate(
          'dead-letter',
          `dead letter for an input that could succeed: ${dl.event?.['detail-type']} to ${dl.target}`,
          {
            eventId: dl.eventId,
            rule: dl.rule,
            reason: dl.reason,
            attempts: dl.attempts,
            error: String(reason ?? '').slice(0, 300),
            clusterId,
            nodePool: detail.nodePool,
          },
        );
      }
    }
    this.#deadLettersSeen = letters.length;
  }

  /** Known secrets: every pool's Secret values and the cluster CA's private key. */
  async #learnSecrets(clusterId: string, view: ClusterView): Promise<void> {
    let learned = false;
    for (const { kind, obj } of view.owned) {
      if (kind !== 'Secret') continue;
      const id = `${clusterId}/${obj.metadata.name}/${obj.metadata.uid}/${obj.metadata.resourceVersion ?? ''}`;
      if (this.#knownIds.has(id)) continue;
      this.#knownIds.add(id);
      this.#known.push(...secretObjectSecrets(obj));
      learned = true;
    }
    const ca = this.#w.fleet.clusterCa.keys.privateKey;
    if (!this.#caKeys.has(ca)) {
      this.#caKeys.add(ca);
      const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', ca);
      this.#known.push(...privateKeysInPem(PemConverter.encode(pkcs8, 'PRIVATE KEY'), 'cluster CA key'));
      learned = true;
    }
    if (learned) this.#scanner = new SecretScanner(this.#known);
  }

  async #secrets(now: boolean): Promise<void> {
    if (!now) return;
    for (const { where, text } of this.#tap.drain()) {
      this.#count('secret-scan');
      for (const f of this.#scanner.scan(where, text))
        this.#w.violate('secret', `${f.what} in ${f.where}`, { where: f.where, what: f.what });
    }
  }

  #memory(): void {
    this.#count('rss');
    const mb = Math.round(process.memoryUsage().rss / 1e6);
    if (!this.rss.firstMb) this.rss.firstMb = mb;
    this.rss.lastMb = mb;
    if (mb > this.rss.maxMb) {
      if (mb > BOUNDS.rssMb && this.rss.maxMb <= BOUNDS.rssMb)
        this.#w.violate('rss', `soak process resident size ${mb} MB exceeds ${BOUNDS.rssMb} MB`, { rssMb: mb });
      this.rss.maxMb = mb;
    }
  }
}

/** When the last pod of the pool bound to a NotReady (or gone) node is due to be evicted; 0 when none is. */
function evictionDue(view: ClusterView, pool: string): number {
  let due = 0;
  for (const pod of view.pods) {
    const nodeName = pod.spec?.nodeName;
    if (pod.metadata.labels?.['app.kubernetes.io/instance'] !== `ps-${pool}` || !nodeName) continue;
    const node = view.nodes.find((n) => n.metadata.name === nodeName);
    const grace = evictionGraceSeconds(pod, node);
    if (grace === undefined || !Number.isFinite(grace)) continue;
    const since =
      Date.parse((node?.status?.conditions ?? []).find((c) => c.type === 'Ready')?.lastTransitionTime ?? '') || view.at;
    due = Math.max(due, since + grace * 1000);
  }
  return due;
}

function podSummary(p: Obj): string {
  const conds = (p.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`)
    .join(',');
  return `${p.metadata.name} node=${p.spec?.nodeName ?? '-'} phase=${p.status?.phase ?? '-'} ${conds}${p.metadata.deletionTimestamp ? ' deleting' : ''} created=${p.metadata.creationTimestamp}`;
}

function wantsSpirit(pool: Obj): boolean {
  return (
    pool.spec?.type === 'Edge' &&
    !pool.metadata?.deletionTimestamp &&
    pool.metadata?.annotations?.[OPT_OUT_ANNOTATION] !== 'true'
  );
}

function foreignEntry(kind: string, obj: Obj): string | undefined {
  if (kind === 'Deployment' && (obj.spec?.template?.spec?.containers ?? []).some((c) => c.name === FOREIGN_CONTAINER))
    return `sidecar ${FOREIGN_CONTAINER}`;
  if (kind === 'Service' && (obj.spec?.ports ?? []).some((p) => p.name === FOREIGN_PORT)) return `port ${FOREIGN_PORT}`;
  return undefined;
}

async function scanTable(w: SoakWorld): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await w.fleet.table.doc.send(
      new ScanCommand({ TableName: w.fleet.table.name, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
