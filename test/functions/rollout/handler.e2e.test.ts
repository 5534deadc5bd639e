/**
 * The rollout handler against real local apiservers and dynalite, with a deterministic stand-in for the
 * reconciler (fleet-world.ts) and a virtual clock: duplicate and concurrent invocations, a crash at every
 * side effect, and the summary the handler returns.
 */

import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listRollouts, readRollout } from '../../../adapters/state-table/index.ts';
import { RolloutCommandError } from '../../../core/rollout/index.ts';
import type { RolloutResult } from '../../../functions/rollout/handler.ts';
import { parseRolloutInput } from '../../../functions/rollout/handler.ts';
import type { RolloutFleet } from './fleet-world.ts';
import { startRolloutFleet } from './fleet-world.ts';

let fleet: RolloutFleet;

/** Puts every PoolSpirit back to the pre-rollout spec (as an operator would, with a merge patch). */
async function resetSpecs(): Promise<void> {
  for (const t of fleet.clusters.values()) {
    const custom = t.kc.makeApiClient(CustomObjectsApi);
    for (const name of Object.keys(await fleet.specs())
      .filter((k) => k.startsWith('c1/'))
      .map((k) => k.slice(3))) {
      await custom.patchClusterCustomObject(
        {
          group: 'poolspirit.io',
          version: 'v1alpha1',
          plural: 'poolspirits',
          name,
          body: { spec: { version: '0.1.0', agent: null } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
  }
  fleet.bad = {};
  fleet.wrapOps = undefined;
  // A rollout a failed test left running would keep changing the clusters.
  for (const r of await listRollouts(fleet.table, { activeOnly: true })) {
    // An index entry may lag behind a finished rollout (healed by the next tick): refusing is fine then.
    await fleet.invoke({ command: 'abort', rolloutId: r.id }).catch((err) => {
      if (!(err instanceof RolloutCommandError)) throw err;
    });
  }
  await fleet.settle();
}

const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

/** Ticks (every active rollout) with the stand-in reconciler in between, until `id` is finished. */
async function runToEnd(id: string, stepMs = 1000, maxTicks = 80): Promise<RolloutResult[]> {
  const results: RolloutResult[] = [];
  for (let i = 0; i < maxTicks; i++) {
    await fleet.settle();
    fleet.ms += stepMs;
    try {
      results.push(await fleet.invoke({ command: 'tick' }));
    } catch (err) {
      // A crashed step fails the tick (the bus would retry it); the next tick carries on.
      if (!/crash at side effect/.test((err as Error).message)) throw err;
    }
    const state = await readRollout(fleet.table, id);
    if (state && TERMINAL.includes(state.phase)) return results;
  }
  throw new Error(`rollout ${id} did not finish`);
}

class CrashError extends Error {}

describe('rollout handler', () => {
  beforeAll(async () => {
    fleet = await startRolloutFleet(3, 2, (i) => ({ region: i < 2 ? 'eu' : 'us' }));
  });
  afterAll(() => fleet?.stop());
  beforeEach(resetSpecs);
  it('runs canary then waves to success, and reports per cluster and per pool', async () => {
    const start = await fleet.invoke({
      command: 'start',
      rollout: {
        id: 'happy',
        patch: { agent: { version: '0.2.0' } },
        canary: ['c2'],
        maxConcurrency: '2',
        soak: '3s',
        progressDeadline: '1m',
      },
    });
    expect(start.rollouts[0]).toMatchObject({
      rolloutId: 'happy',
      phase: 'Progressing',
      wave: 1,
      clusters: { Updating: 1, Pending: 2 },
    });
    expect(start.rollouts[0].actions).toEqual([{ kind: 'apply-version', clusterId: 'c2', poolsWritten: 2 }]);
    await runToEnd('happy');
    const state = (await readRollout(fleet.table, 'happy'))!;
    expect(state.phase).toBe('Succeeded');
    expect(state.clusters.map((c) => [c.id, c.phase, c.wave])).toEqual([
      ['c2', 'Succeeded', 1],
      ['c1', 'Succeeded', 2],
      ['c3', 'Succeeded', 2],
    ]);
    expect(state.clusters[0]).toMatchObject({ poolCount: 2, healthyPools: 2, pools: {} });
    const specs = await fleet.specs();
    for (const spec of Object.values(specs))
      expect(spec).toMatchObject({ version: '0.1.0', agent: { version: '0.2.0' } });
  });

  it('selects clusters by label', async () => {
    await fleet.invoke({
      command: 'start',
      rollout: {
        id: 'eu-only',
        version: '0.1.0',
        patch: { agent: { version: '0.2.0' } },
        selector: { region: 'eu' },
        soak: 0,
      },
    });
    await runToEnd('eu-only');
    const state = (await readRollout(fleet.table, 'eu-only'))!;
    expect(state.clusters.map((c) => c.id)).toEqual(['c1', 'c2']);
    const specs = await fleet.specs();
    expect(specs['c3/pool-0']).not.toHaveProperty('agent');
  });

  it('stops and rolls back by itself when a version never becomes healthy in one cluster', async () => {
    fleet.bad = { c3: ['0.3.0'] };
    await fleet.invoke({
      command: 'start',
      rollout: {
        id: 'bad',
        patch: { agent: { version: '0.3.0' } },
        canary: 1,
        maxConcurrency: '2',
        soak: '2s',
        progressDeadline: '20s',
        autoRollback: true,
      },
    });
    await runToEnd('bad');
    const state = (await readRollout(fleet.table, 'bad'))!;
    expect(state.phase).toBe('RolledBack');
    expect(state.reason).toMatch(/c3/);
    const c3 = state.clusters.find((c) => c.id === 'c3')!;
    expect(c3).toMatchObject({ phase: 'RolledBack', failed: true });
    expect(c3.reason).toMatch(/progress deadline \(20s\) passed/);
    for (const spec of Object.values(await fleet.specs()))
      expect(spec).toEqual({ nodePool: expect.any(String), version: '0.1.0' });
  });

  it('treats a duplicated start as the same rollout and refuses a different one with the same id', async () => {
    const request = {
      command: 'start',
      rollout: { id: 'dup', version: '0.1.0', patch: { agent: { version: '0.2.0' } }, soak: 0 },
    } as const;
    const [a, b] = await Promise.all([fleet.invoke(request), fleet.invoke(request)]);
    expect(a.rollouts[0].wave).toBe(1);
    expect(b.rollouts[0].wave).toBe(1);
    const state = (await readRollout(fleet.table, 'dup'))!;
    expect(state.clusters.filter((c) => c.phase === 'Updating')).toHaveLength(1);
    await expect(
      fleet.invoke({
        command: 'start',
        rollout: { id: 'dup', version: '0.1.0', patch: { agent: { version: '0.9.0' } } },
      }),
    ).rejects.toThrow(/rollout dup already exists/);
    await fleet.invoke({ command: 'abort', rolloutId: 'dup' });
  });

  it('concurrent ticks never start a wave twice or exceed the concurrency', async () => {
    await fleet.invoke({
      command: 'start',
      rollout: { id: 'busy', patch: { agent: { version: '0.2.0' } }, maxConcurrency: '1', soak: 0 },
    });
    let writes = 0;
    fleet.wrapOps = (ops) => ({
      ...ops,
      listPoolSpirits: ops.listPoolSpirits,
      applySpecFields: (n, f) => {
        writes++;
        return ops.applySpecFields(n, f);
      },
    });
    for (let i = 0; i < 12; i++) {
      await fleet.settle();
      fleet.ms += 1000;
      const results = await Promise.all([1, 2, 3].map(() => fleet.invoke({ command: 'tick', rolloutId: 'busy' })));
      for (const r of results)
        expect((r.rollouts[0].clusters.Updating ?? 0) + (r.rollouts[0].clusters.Soaking ?? 0)).toBeLessThanOrEqual(1);
      const state = (await readRollout(fleet.table, 'busy'))!;
      if (state.phase === 'Succeeded') break;
    }
    const state = (await readRollout(fleet.table, 'busy'))!;
    expect(state.phase).toBe('Succeeded');
    expect(state.wave).toBe(3);
    // Each of the 4 pools of c2 and c3 is written at most once per concurrent invocation, never more.
    expect(writes).toBeGreaterThanOrEqual(4);
    expect(writes).toBeLessThanOrEqual(12);
  });

  it('pause holds new waves, resume continues, abort stops, rollback undoes', async () => {
    await fleet.invoke({ command: 'start', rollout: { id: 'ctl', patch: { agent: { version: '0.2.0' } }, soak: 0 } });
    const paused = await fleet.invoke({ command: 'pause', rolloutId: 'ctl', requestedBy: 'test' });
    expect(paused.rollouts[0].phase).toBe('Paused');
    for (let i = 0; i < 4; i++) {
      await fleet.settle();
      fleet.ms += 1000;
      await fleet.invoke({ command: 'tick' });
    }
    let state = (await readRollout(fleet.table, 'ctl'))!;
    expect(state.clusters.map((c) => c.phase)).toEqual(['Succeeded', 'Pending', 'Pending']);
    await fleet.invoke({ command: 'resume', rolloutId: 'ctl' });
    state = (await readRollout(fleet.table, 'ctl'))!;
    expect(state.wave).toBe(2);
    await fleet.invoke({ command: 'abort', rolloutId: 'ctl' });
    await expect(fleet.invoke({ command: 'resume', rolloutId: 'ctl' })).rejects.toThrow(
      /cannot resume rollout ctl: it is Aborted/,
    );
    await fleet.invoke({ command: 'rollback', rolloutId: 'ctl' });
    await runToEnd('ctl');
    state = (await readRollout(fleet.table, 'ctl'))!;
    expect(state.phase).toBe('RolledBack');
    for (const spec of Object.values(await fleet.specs())) expect(spec).not.toHaveProperty('agent');
  });

  it('names the bad field of a bad request', async () => {
    await expect(
      fleet.invoke({ command: 'start', rollout: { id: 'x', version: '0.2.0', maxConcurrency: 'lots' } }),
    ).rejects.toThrow(/^maxConcurrency: expected a whole number/);
    await expect(fleet.invoke({ command: 'pause' })).rejects.toThrow(/rolloutId/);
    await expect(fleet.invoke({ command: 'tick', rolloutId: 'nope' })).rejects.toThrow(/rollout nope does not exist/);
    expect(
      parseRolloutInput({
        version: '0',
        id: 'e',
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '1',
        time: '2026-01-01T00:00:00Z',
        region: 'x',
        resources: [],
        detail: {},
      }),
    ).toEqual({ command: 'tick' });
  });
});

describe('crash at any step', () => {
  // Small on purpose: every side effect of a whole rollout is a crash point, each a full run.
  beforeAll(async () => {
    fleet = await startRolloutFleet(2, 1);
  });
  afterAll(() => fleet?.stop());
  beforeEach(resetSpecs);
  /**
   * Counts every side effect (table write, PoolSpirit write); the n-th throws as if the function died
   * there. The rollout must still end exactly as it does without a crash.
   */
  function crashAt(n: number) {
    let count = 0;
    const hit = () => {
      if (++count === n) throw new CrashError(`crash at side effect ${n}`);
    };
    const doc = fleet.table.doc;
    const original = doc.send.bind(doc);
    (doc as any).send = (command: any, ...rest: any[]) => {
      if (/^(Put|Update|Delete)Command$/.test(command?.constructor?.name)) hit();
      return original(command, ...rest);
    };
    fleet.wrapOps = (ops) => ({
      ...ops,
      listPoolSpirits: ops.listPoolSpirits,
      applySpecFields: (name, fields) => {
        hit();
        return ops.applySpecFields(name, fields);
      },
    });
    return { count: () => count, restore: () => ((doc as any).send = original) };
  }

  async function scenario(id: string, bad: boolean, n: number) {
    fleet.bad = bad ? { c2: ['0.4.0'] } : {};
    const crash = crashAt(n);
    try {
      const request = {
        command: 'start',
        rollout: {
          id,
          patch: { agent: { version: '0.4.0' } },
          maxConcurrency: '1',
          soak: '1s',
          progressDeadline: '3s',
          autoRollback: true,
        },
      };
      // The bus retries a failed invocation: a start that crashed is delivered again.
      for (let attempt = 0; ; attempt++) {
        try {
          await fleet.invoke(request);
          break;
        } catch (err) {
          if (!(err instanceof CrashError) || attempt > 2) throw err;
        }
      }
      await runToEnd(id);
      return { state: (await readRollout(fleet.table, id))!, specs: await fleet.specs(), sideEffects: crash.count() };
    } finally {
      crash.restore();
    }
  }

  it.each([false, true])('resumes correctly after a crash at every side effect (bad version: %s)', async (bad) => {
    const clean = await scenario(`clean-${bad}`, bad, 0);
    expect(clean.state.phase).toBe(bad ? 'RolledBack' : 'Succeeded');
    const total = clean.sideEffects;
    expect(total).toBeGreaterThan(5);
    for (let n = 1; n <= total; n++) {
      await resetSpecs();
      fleet.bad = bad ? { c2: ['0.4.0'] } : {};
      const run = await scenario(`crash-${bad}-${n}`, bad, n);
      expect(run.state.phase, `crash at side effect ${n}`).toBe(clean.state.phase);
      expect(run.specs, `crash at side effect ${n}`).toEqual(clean.specs);
      expect(
        run.state.clusters.map((c) => c.phase),
        `crash at side effect ${n}`,
      ).toEqual(clean.state.clusters.map((c) => c.phase));
    }
  });
});
