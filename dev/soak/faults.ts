/**
 * The injected faults. Each runs for a short window drawn from the seeded PRNG and then ends; the fleet
 * must be whole again within the invariants' bounds of its end (world.fault times that repair).
 *
 * Kubernetes API faults use the local API's own injector (`LocalCluster.setFaults`), so they hit every
 * client of the cluster alike — the reconciler, the forwarder and the sim kubelet — as a sick apiserver
 * would. Bus faults re-inject events the bus has accepted (the same event id), duplicated, late or
 * shuffled, through the bus's public injectEvent: what an at-least-once, unordered delivery can do.
 */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { eventBridgePutEvents } from '../../adapters/eventbridge/put-events.ts';
import { CHANGE_NOTICE_DETAIL_TYPE } from '../../events/source.ts';
import { Forwarder } from '../../forwarder/forwarder.ts';
import type { BusEvent } from '../local/bus/types.ts';
import { localApiOf } from '../local/fleet/fleet.ts';
import { fleetForwarder } from '../local/fleet/fleet-cluster.ts';
import { PRODUCT_NAMESPACE } from '../local/fleet/seed.ts';
import type { FaultRule } from '../local/kube-api/faults.ts';
import type { SoakWorld } from './world.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WRITES = ['create', 'update', 'patch', 'delete'];
const ALL = ['get', 'list', 'create', 'update', 'patch', 'delete'];

/** The function timeout the soak runs the reconcile function with (a timeout fault delays writes past it). */
export const RECONCILE_TIMEOUT_MS = 5_000;

async function withApiFaults(w: SoakWorld, rules: FaultRule[], ms: number): Promise<void> {
  const seed = w.rng.int(2 ** 31);
  await Promise.all(w.fleet.clusters.map((c) => localApiOf(c).setFaults({ seed, rules })));
  try {
    await sleep(ms);
  } finally {
    await Promise.all(w.fleet.clusters.map((c) => localApiOf(c).setFaults({ rules: [] })));
  }
}

/** Bus event tap: while a bus fault runs, every event the bus accepts is handed to it once. */
export class BusChaos {
  #hook: ((event: BusEvent) => void) | undefined;
  readonly #reinjected = new Set<string>();
  #w: SoakWorld | undefined;

  attach(w: SoakWorld): void {
    this.#w = w;
  }

  /** Passed to the fleet as its onBusActivity. */
  onAccepted(event: BusEvent): void {
    // A re-injected copy is accepted again; it is not copied a second time.
    if (this.#reinjected.delete(event.id)) return;
    // The product's own events (notices, requests) travel on its bus; schedule ticks are left alone.
    if (event.source.startsWith('pool-spirit.')) this.#hook?.(event);
  }

  reinject(event: BusEvent): void {
    const w = this.#w!;
    this.#reinjected.add(event.id);
    try {
      w.fleet.bus.injectEvent(structuredClone(event), w.fleet.eventBusName);
    } catch {
      this.#reinjected.delete(event.id);
    }
  }

  async during(ms: number, hook: (event: BusEvent) => void): Promise<void> {
    this.#hook = hook;
    try {
      await sleep(ms);
    } finally {
      this.#hook = undefined;
    }
  }
}

type FaultRun = (w: SoakWorld, chaos: BusChaos) => Promise<void>;

const isNotice = (e: BusEvent) => e['detail-type'] === CHANGE_NOTICE_DETAIL_TYPE;

/** Holds events for a window, then re-injects them shuffled (stale copies arrive after newer events). */
async function reorder(w: SoakWorld, chaos: BusChaos, ms: number, filter: (e: BusEvent) => boolean): Promise<void> {
  const held: BusEvent[] = [];
  await chaos.during(ms, (e) => filter(e) && held.length < 500 && held.push(structuredClone(e)));
  for (const e of w.rng.shuffle(held)) chaos.reinject(e);
}

/**
 * `lane`: faults of one lane run one after another; the two lanes run side by side (an API fault may
 * coincide with a bus fault or a restart, as in life; two API faults would overwrite each other's rules).
 */
export const FAULTS: Record<string, { weight: number; lane: 'api' | 'delivery'; run: FaultRun; needs?: 'etcd' }> = {
  'api-409': {
    weight: 2,
    lane: 'api',
    run: (w) =>
      withApiFaults(w, [{ verbs: ['update', 'patch'], errorRate: 0.4, errorStatus: 409 }], w.rng.between(1_500, 5_000)),
  },
  'api-429': {
    weight: 2,
    lane: 'api',
    run: (w) => withApiFaults(w, [{ verbs: ALL, errorRate: 0.3, errorStatus: 429 }], w.rng.between(1_500, 5_000)),
  },
  'api-500': {
    weight: 2,
    lane: 'api',
    run: (w) => withApiFaults(w, [{ verbs: ALL, errorRate: 0.3, errorStatus: 500 }], w.rng.between(1_500, 5_000)),
  },
  /** A slow apiserver: reads and writes answered seconds late (clients' own timeouts and the function's). */
  'api-timeout': {
    weight: 2,
    lane: 'api',
    run: (w) => withApiFaults(w, [{ verbs: ALL, latencyMs: w.rng.between(2_000, 4_000) }], w.rng.between(3_000, 6_000)),
  },
  'watch-drop': {
    weight: 2,
    lane: 'api',
    run: (w) =>
      withApiFaults(
        w,
        [{ verbs: ['watch'], watchDropAfterMs: w.rng.between(100, 1_000) }],
        w.rng.between(3_000, 8_000),
      ),
  },
  /** Writes answered after the function's timeout: the invocation times out with its work half done. */
  'function-timeout': {
    weight: 1,
    lane: 'api',
    async run(w) {
      const before = w.fleet.reconcile.stats.timeouts;
      await withApiFaults(
        w,
        [{ verbs: WRITES, latencyMs: RECONCILE_TIMEOUT_MS + 1_000 }],
        RECONCILE_TIMEOUT_MS + 2_000,
      );
      w.faults.add(
        w.fleet.reconcile.stats.timeouts > before
          ? 'function-timeout (timed out)'
          : 'function-timeout (no invocation ran)',
      );
    },
  },
  /**
   * A reconcile cut off between two applies: once invocations are running, every further write fails for
   * a moment, so each ends with some of its objects applied and the rest not (what a killed sandbox leaves).
   */
  'function-killed-between-applies': {
    async run(w) {
      const until = Date.now() + 5_000;
      while (w.fleet.reconcile.stats.running === 0 && Date.now() < until) await sleep(20);
      w.faults.add(
        w.fleet.reconcile.stats.running > 0
          ? 'function-killed-between-applies (hit a running reconcile)'
          : 'function-killed-between-applies (none running)',
      );
      await withApiFaults(w, [{ verbs: WRITES, errorRate: 1, errorStatus: 500 }], w.rng.between(1_000, 3_000));
    },
    weight: 1,
    lane: 'api',
  },
  'bus-duplicate': {
    weight: 2,
    lane: 'delivery',
    run: (w, chaos) => chaos.during(w.rng.between(1_500, 5_000), (e) => chaos.reinject(e)),
  },
  'bus-delay': {
    weight: 2,
    lane: 'delivery',
    async run(w, chaos) {
      const late: Promise<void>[] = [];
      await chaos.during(w.rng.between(2_000, 5_000), (e) => {
        const copy = structuredClone(e);
        late.push(sleep(w.rng.between(1_000, 8_000)).then(() => chaos.reinject(copy)));
      });
      await Promise.all(late);
    },
  },
  'bus-reorder': {
    weight: 2,
    lane: 'delivery',
    run: (w, chaos) => reorder(w, chaos, w.rng.between(1_000, 4_000), () => true),
  },
  /** What a duplicated watch event becomes past the forwarder: the same change notice twice. */
  'watch-duplicate': {
    weight: 1,
    lane: 'delivery',
    run: (w, chaos) => chaos.during(w.rng.between(2_000, 5_000), (e) => isNotice(e) && chaos.reinject(e)),
  },
  /** What reordered watch events become past the forwarder: change notices, older ones last. */
  'watch-reorder': {
    weight: 1,
    lane: 'delivery',
    run: (w, chaos) => reorder(w, chaos, w.rng.between(1_000, 4_000), isNotice),
  },
  'forwarder-restart': {
    weight: 2,
    lane: 'delivery',
    async run(w) {
      const c = w.cluster();
      await c.forwarder.stop(2_000);
      await sleep(w.rng.between(500, 4_000));
      // A new process would have a new client: nothing of the old forwarder's watch state carries over.
      const eventBridge = new EventBridgeClient({
        endpoint: w.fleet.bus.endpoint,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      });
      const forwarder = new Forwarder({
        clusterId: c.id,
        kubeConfig: c.kubeConfig,
        bus: eventBridgePutEvents(eventBridge),
        eventBusName: w.fleet.eventBusName,
        namespace: PRODUCT_NAMESPACE,
      });
      forwarder.start();
      c.forwarder = fleetForwarder(forwarder);
    },
  },
  'stack-restart': {
    weight: 1,
    lane: 'delivery',
    needs: 'etcd',
    run: async () => {
      throw new Error('run by the soak loop (it replaces the fleet)');
    },
  },
};
