/**
 * The etcd the agent runs next to: readings for the health report and the maintenance calls. The gRPC
 * client (etcd3) is opened only when endpoints are configured; the /health URL alone gives a health-only
 * report.
 */
import { readFileSync } from 'node:fs';
import { noop } from 'cockatiel';
import { AlarmAction, AlarmType, Etcd3 } from 'etcd3';
import type { EtcdReading } from '../decide/etcd.ts';
import type { EtcdConnection } from '../options.ts';

export interface EtcdAccess {
  read(): Promise<EtcdReading>;
  /** Compacts history up to `revision` (physically, so the space is free for a defrag). */
  compact(revision: number): Promise<void>;
  defragment(): Promise<void>;
  /** Disarms the NOSPACE alarm of every member. */
  disarmNoSpace(): Promise<void>;
  close(): void;
}

const CALL_DEADLINE_MS = 10_000;
/** A defrag blocks etcd for about a second per 100 MB; give a full-quota file room. */
const DEFRAG_DEADLINE_MS = 60_000;

/** `client` is the one the agent shares between its etcd steps; by default one is opened for `conn`. */
export function createEtcdAccess(
  conn: EtcdConnection | undefined,
  healthUrl: string | undefined,
  client: Etcd3 | undefined = conn ? openEtcdClient(conn) : undefined,
): EtcdAccess {
  const deadline = (ms = CALL_DEADLINE_MS) => ({ deadline: Date.now() + ms });
  const withoutClient = async (): Promise<never> => {
    throw new Error('no --etcd-endpoints configured');
  };
  return {
    async read() {
      const health = healthUrl ? await healthEndpointOk(healthUrl) : undefined;
      if (!client) {
        if (health === undefined) throw new Error('neither --etcd-endpoints nor --etcd-health-url configured');
        return { healthEndpointOk: health };
      }
      const status = await client.maintenance.status(deadline());
      const alarms = await client.maintenance.alarm(
        { action: AlarmAction.Get, memberID: 0, alarm: AlarmType.None },
        deadline(),
      );
      return {
        dbSizeBytes: Number(status.dbSize),
        dbSizeInUseBytes: Number(status.dbSizeInUse),
        alarms: alarms.alarms.map((a) => alarmName(a.alarm)).filter((a) => a !== 'NONE'),
        revision: Number(status.header.revision),
        healthEndpointOk: health,
      };
    },
    async compact(revision) {
      if (!client) return withoutClient();
      try {
        await client.kv.compact({ revision, physical: true }, deadline(DEFRAG_DEADLINE_MS));
      } catch (err) {
        // Compacted already (auto-compaction got there first): exactly the state wanted.
        if (!/required revision has been compacted/.test((err as Error).message)) throw err;
      }
    },
    async defragment() {
      if (!client) return withoutClient();
      await client.maintenance.defragment(deadline(DEFRAG_DEADLINE_MS));
    },
    async disarmNoSpace() {
      if (!client) return withoutClient();
      // Get lists every member's alarms with memberID 0, but Deactivate needs the member that raised it.
      const raised = await client.maintenance.alarm(
        { action: AlarmAction.Get, memberID: 0, alarm: AlarmType.None },
        deadline(),
      );
      for (const a of raised.alarms.filter((x) => alarmName(x.alarm) === 'NOSPACE')) {
        await client.maintenance.alarm(
          { action: AlarmAction.Deactivate, memberID: a.memberID, alarm: AlarmType.Nospace },
          deadline(),
        );
      }
    },
    close() {
      client?.close();
    },
  };
}

export function openEtcdClient(conn: EtcdConnection): Etcd3 {
  const read = (file: string | undefined, what: string) => {
    if (!file) return undefined;
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`--etcd-${what}-file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const rootCertificate = read(conn.caFile, 'ca');
  const certChain = read(conn.certFile, 'cert');
  const privateKey = read(conn.keyFile, 'key');
  const tls = conn.endpoints.some((e) => e.startsWith('https:'));
  return new Etcd3({
    hosts: [...conn.endpoints],
    ...(tls && rootCertificate ? { credentials: { rootCertificate, certChain, privateKey } } : {}),
    // etcd3's default fault handling retries and then opens a circuit breaker (even on NOSPACE); the agent
    // retries on its own schedule instead and must be able to reach etcd the moment it is back.
    faultHandling: { host: () => noop, global: noop },
  });
}

/** etcd spells alarms NOSPACE and CORRUPT (etcdctl alarm list); the client's enum says Nospace. */
function alarmName(alarm: unknown): string {
  const name = typeof alarm === 'number' ? AlarmType[alarm] : String(alarm);
  return (name ?? String(alarm)).toUpperCase();
}

/** etcd's /health answer: `{"health":"true"}`; anything else (or no answer) is unhealthy. */
async function healthEndpointOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as { health?: unknown };
    return res.ok && (body.health === 'true' || body.health === true);
  } catch {
    return false;
  }
}
