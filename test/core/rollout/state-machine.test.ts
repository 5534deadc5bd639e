import { describe, expect, it } from 'vitest';
import {
  applyCommand,
  concurrencyLimit,
  decide,
  isInFlight,
  newRolloutState,
  parseRolloutSpec,
  RolloutCommandError,
  RolloutSpecError,
} from '../../../core/rollout/index.ts';
import type { Health } from './world.ts';
import { at, ids, observation, rollout, World } from './world.ts';

const phases = (w: World) => Object.fromEntries(w.state.clusters.map((c) => [c.id, c.phase]));

describe('canary', () => {
  it.each([
    ['by id', { canary: ['c03'] }, ['c03']],
    ['by count', { canary: 2 }, ['c01', 'c02']],
  ])('goes first and alone (%s)', (_name, input, canaries) => {
    const w = new World(rollout(5, { ...input, maxConcurrency: '3', soak: '5s' }));
    w.step();
    expect(w.state.wave).toBe(1);
    const inFlight = w.state.clusters.filter(isInFlight).map((c) => c.id);
    expect(inFlight).toEqual(canaries);
    // While a canary soaks, nothing else starts, whatever the concurrency allows.
    for (let i = 0; i < 3; i++) {
      w.step();
      expect(w.state.clusters.filter(isInFlight).every((c) => c.canary)).toBe(true);
    }
    w.runUntilDone();
    expect(w.state.phase).toBe('Succeeded');
  });

  it('a failing canary stops the rollout even with a failure budget left', () => {
    const w = new World(rollout(5, { canary: ['c02'], maxFailures: '3' }), (id) =>
      id === 'c02' ? 'invalid' : 'healthy',
    );
    w.runUntilDone();
    expect(w.state.phase).toBe('Failed');
    expect(w.state.reason).toMatch(/canary c02 failed: pool pool-0 rejected the spec/);
    expect(w.everApplied).toEqual(new Set(['c02']));
  });

  it('refuses canaries outside the selection and canaries that leave no wave', () => {
    const spec = parseRolloutSpec({ id: 'r', version: '0.2.0', canary: ['c09'] });
    expect(() => newRolloutState(spec, ids(3), at(0))).toThrow(/canary: not among the selected clusters: c09/);
    expect(() => newRolloutState(parseRolloutSpec({ id: 'r', version: '0.2.0', canary: 3 }), ids(3), at(0))).toThrow(
      /leaves no cluster/,
    );
  });
});

describe('concurrency', () => {
  // A seeded generator keeps failures reproducible.
  function rng(seed: number) {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }

  it('is never exceeded, over random health sequences and limits', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const rand = rng(seed);
      const n = 2 + Math.floor(rand() * 9);
      const limit = rand() < 0.5 ? String(1 + Math.floor(rand() * 4)) : `${10 + Math.floor(rand() * 60)}%`;
      const table = new Map<string, Health>();
      const health = (id: string, ms: number): Health => {
        const key = `${id}@${ms}`;
        if (!table.has(key)) {
          const r = rand();
          table.set(key, r < 0.6 ? 'healthy' : r < 0.9 ? 'unhealthy' : r < 0.97 ? 'unreachable' : 'invalid');
        }
        return table.get(key)!;
      };
      const w = new World(
        rollout(n, {
          maxConcurrency: limit,
          maxFailures: '50%',
          soak: '3s',
          progressDeadline: '8s',
          canary: rand() < 0.5 ? 1 : undefined,
          autoRollback: rand() < 0.5,
        }),
        health,
      );
      const max = concurrencyLimit(w.state);
      w.runUntilDone(400, 1000, (x) => {
        const flying = x.state.clusters.filter(isInFlight);
        expect(flying.length, `seed ${seed}: ${JSON.stringify(phases(x))}`).toBeLessThanOrEqual(
          x.state.phase === 'RollingBack' ? n : max,
        );
        if (x.state.phase !== 'RollingBack') expect(new Set(flying.map((c) => c.canary)).size).toBeLessThanOrEqual(1);
      });
    }
  });

  it('resolves percentages up and never below one', () => {
    expect(concurrencyLimit(rollout(3, { maxConcurrency: '25%' }))).toBe(1);
    expect(concurrencyLimit(rollout(10, { maxConcurrency: '25%' }))).toBe(3);
  });

  it('runs waves of the allowed size, one after the other', () => {
    const w = new World(rollout(5, { maxConcurrency: '2' }));
    const waves: string[][] = [];
    w.runUntilDone(50, 1000, (x) => {
      const started = x.state.clusters.filter((c) => c.wave === x.state.wave).map((c) => c.id);
      if (waves.length < x.state.wave) waves.push(started);
    });
    expect(waves).toEqual([['c01', 'c02'], ['c03', 'c04'], ['c05']]);
  });

  it("names a wave's first clusters in its reason and counts the rest (the reason is stored with the state)", () => {
    const small = new World(rollout(5, { maxConcurrency: '100%' }));
    small.step();
    expect(small.state.reason).toBe('wave 1: c01, c02, c03, c04, c05');
    const big = new World(rollout(40, { maxConcurrency: '100%' }));
    big.step();
    expect(big.state.reason).toBe('wave 1: c01, c02, c03, c04, c05, c06, c07, c08, c09, c10 and 30 more');
    expect(big.state.clusters.filter((c) => c.wave === 1)).toHaveLength(40);
  });
});

describe('failure budget', () => {
  it.each([
    ['1', ['c02'], 'Succeeded'],
    ['1', ['c02', 'c04'], 'Failed'],
    ['40%', ['c02', 'c04'], 'Succeeded'],
    ['0', ['c05'], 'Failed'],
  ])('maxFailures %s with %j failing → %s', (maxFailures, failing, outcome) => {
    const w = new World(rollout(5, { maxFailures }), (id) => (failing.includes(id) ? 'unhealthy' : 'healthy'));
    w.runUntilDone(5000, 60_000);
    expect(w.state.phase).toBe(outcome);
    for (const id of failing) expect(w.phaseOf(id)).toBe('Failed');
    if (outcome === 'Failed') expect(w.state.reason).toMatch(/more than the \d+ allowed/);
  });
});

describe('progress deadline', () => {
  it('fails a cluster that is not healthy by its deadline, not before', () => {
    let w = new World(rollout(2, { progressDeadline: '5m', maxFailures: '1' }), (id) =>
      id === 'c01' ? 'unhealthy' : 'healthy',
    );
    w.step(0); // wave 1 starts at t=0
    w.ms = 5 * 60_000 - 1;
    w.step(0);
    expect(w.phaseOf('c01')).toBe('Updating');
    w.step(1);
    expect(w.phaseOf('c01')).toBe('Failed');
    expect(w.state.clusters[0].reason).toMatch(
      /progress deadline \(5m\) passed: 2 of 2 pools not healthy \(pool-0: not available/,
    );
    // The deadline passes for an unreachable cluster too: no observation is needed to fail it.
    w = new World(rollout(1, { progressDeadline: '1m' }));
    w.step(0);
    const d = decide(w.state, [], at(60_000));
    expect(d.state.clusters[0].phase).toBe('Failed');
    expect(d.state.phase).toBe('Failed');
  });
});

describe('soak', () => {
  it('is respected and restarted by a dip', () => {
    const dips = new Set([4000]);
    const w = new World(rollout(1, { soak: '5s' }), (_id, ms) => (dips.has(ms) ? 'unhealthy' : 'healthy'));
    w.step(0); // t=0 wave starts
    w.step(1000); // t=1s healthy → soaking
    expect(w.phaseOf('c01')).toBe('Soaking');
    expect(w.state.clusters[0].soakStartedAt).toBe(at(1000).toISOString());
    w.step(2000); // t=3s
    expect(w.phaseOf('c01')).toBe('Soaking');
    w.step(1000); // t=4s dip
    expect(w.phaseOf('c01')).toBe('Updating');
    expect(w.state.clusters[0].reason).toMatch(/^soak restarted: /);
    w.step(1000); // t=5s healthy again: soak starts over
    expect(w.state.clusters[0].soakStartedAt).toBe(at(5000).toISOString());
    w.step(4999); // t=9.999s: not yet 5 s since the restart
    expect(w.phaseOf('c01')).toBe('Soaking');
    w.step(1); // t=10s
    expect(w.phaseOf('c01')).toBe('Succeeded');
    expect(w.state.phase).toBe('Succeeded');
  });

  it('requires every pool at the new version with a healthy leader', () => {
    const w = new World(rollout(1, { soak: '1s' }));
    w.step(0);
    const obs = observation('c01', 1000, 'healthy');
    obs.pools[1] = { ...obs.pools[1], leaderHealthy: false, reason: 'no healthy leader: LeaderStale' };
    let d = decide(w.state, [obs], at(1000));
    expect(d.state.clusters[0].phase).toBe('Updating');
    expect(d.state.clusters[0].pools['pool-1']).toMatchObject({
      leaderHealthy: false,
      reason: 'no healthy leader: LeaderStale',
    });
    obs.pools[1] = { ...obs.pools[1], leaderHealthy: true, atVersion: false, reason: 'running bundle=0.1.0' };
    d = decide(w.state, [obs], at(1000));
    expect(d.state.clusters[0].phase).toBe('Updating');
  });
});

describe('pause, resume, abort', () => {
  it('pause holds new waves without undoing finished ones; resume continues', () => {
    const w = new World(rollout(3, { soak: '2s' }));
    w.step();
    let cmd = applyCommand(w.state, { command: 'pause', by: 'ops' }, at(w.ms));
    w.state = cmd.state;
    expect(applyCommand(w.state, { command: 'pause' }, at(w.ms)).changed).toBe(false);
    for (let i = 0; i < 10; i++) w.step();
    expect(phases(w)).toEqual({ c01: 'Succeeded', c02: 'Pending', c03: 'Pending' });
    expect(w.state.phase).toBe('Paused');
    expect(w.log.filter((a) => a.kind === 'rollback')).toEqual([]);
    cmd = applyCommand(w.state, { command: 'resume' }, at(w.ms));
    w.state = cmd.state;
    w.runUntilDone();
    expect(w.state.phase).toBe('Succeeded');
    expect(() => applyCommand(w.state, { command: 'resume' }, at(w.ms))).toThrow(RolloutCommandError);
    expect(() => applyCommand(w.state, { command: 'resume' }, at(w.ms))).toThrow(/it is Succeeded/);
  });

  it('abort stops without rollback', () => {
    const w = new World(rollout(3, { autoRollback: true, soak: '10s' }));
    w.step();
    w.step();
    w.state = applyCommand(w.state, { command: 'abort' }, at(w.ms)).state;
    const before = w.log.length;
    for (let i = 0; i < 20; i++) expect(w.step()).toEqual([]);
    expect(w.log.length).toBe(before);
    expect(w.state.phase).toBe('Aborted');
    expect(w.atTarget).toEqual(new Set(['c01']));
  });
});

describe('rollback', () => {
  it('automatic: restores the previous spec on every cluster it changed, and only those', () => {
    const w = new World(
      rollout(6, {
        canary: 1,
        maxConcurrency: '2',
        maxFailures: '0',
        autoRollback: true,
        progressDeadline: '30s',
        soak: '2s',
      }),
      (id) => (id === 'c04' ? 'unhealthy' : 'healthy'),
    );
    w.runUntilDone(500, 1000);
    expect(w.state.phase).toBe('RolledBack');
    expect(w.state.reason).toMatch(/c04/);
    expect(w.atTarget.size).toBe(0);
    const changed = [...w.everApplied].sort();
    expect(changed).toEqual(['c01', 'c02', 'c03', 'c04', 'c05']);
    for (const id of changed) expect(w.phaseOf(id)).toBe('RolledBack');
    expect(w.phaseOf('c06')).toBe('Pending');
    expect(w.state.clusters.find((c) => c.id === 'c04')!.failed).toBe(true);
  });

  it('automatic: a failure within the budget rolls back that cluster and the rollout continues', () => {
    const w = new World(rollout(4, { maxFailures: '1', autoRollback: true, progressDeadline: '10s' }), (id) =>
      id === 'c02' ? 'unhealthy' : 'healthy',
    );
    w.runUntilDone();
    expect(w.state.phase).toBe('Succeeded');
    expect(phases(w)).toEqual({ c01: 'Succeeded', c02: 'RolledBack', c03: 'Succeeded', c04: 'Succeeded' });
    expect(w.atTarget).toEqual(new Set(['c01', 'c03', 'c04']));
  });

  it('manual: rolls back everything changed, even after success', () => {
    const w = new World(rollout(3));
    w.runUntilDone();
    w.state = applyCommand(w.state, { command: 'rollback', by: 'ops' }, at(w.ms)).state;
    w.runUntilDone();
    expect(w.state.phase).toBe('RolledBack');
    expect(w.atTarget.size).toBe(0);
    expect(applyCommand(w.state, { command: 'rollback' }, at(w.ms)).changed).toBe(false);
  });
});

describe('idempotence', () => {
  it('duplicated, repeated and reordered observations give the same state', () => {
    const w = new World(rollout(2, { soak: '5s' }));
    w.step(0);
    const older = observation('c01', 1000, 'unhealthy');
    const newer = observation('c01', 2000, 'healthy');
    const once = decide(w.state, [newer], at(2000));
    const dup = decide(w.state, [newer, newer, older], at(2000));
    const reordered = decide(w.state, [older, newer], at(2000));
    expect(dup.state).toEqual(once.state);
    expect(reordered.state).toEqual(once.state);
    // The same input again changes nothing.
    const again = decide(once.state, [newer], at(2000));
    expect(again.changed).toBe(false);
    expect(again.state).toEqual(once.state);
    // An old observation delivered late does not undo the soak.
    const late = decide(once.state, [older], at(3000));
    expect(late.state.clusters[0].phase).toBe('Soaking');
  });

  it('re-issues the change while it is not observed (a crash between the state write and the action)', () => {
    const w = new World(rollout(1));
    const first = decide(w.state, [], at(0));
    expect(first.actions).toEqual([{ kind: 'apply-version', clusterId: 'c01' }]);
    // The action was lost: the next step, with or without an observation, asks again.
    expect(decide(first.state, [], at(1000)).actions).toEqual([{ kind: 'apply-version', clusterId: 'c01' }]);
    expect(decide(first.state, [observation('c01', 1000, 'healthy', false)], at(1000)).actions).toEqual([
      { kind: 'apply-version', clusterId: 'c01' },
    ]);
  });
});

describe('spec validation', () => {
  it.each([
    [{ id: 'Bad_Id', version: '1' }, /^id: expected a DNS label/],
    [{ id: 'r' }, /^version: expected a version or a spec patch/],
    [{ id: 'r', version: '9.9.9' }, /^version: unknown bundle "9\.9\.9"; known bundles: 0\.1\.0, 0\.2\.0/],
    [{ id: 'r', version: '0.2.0', maxConcurrency: '0' }, /^maxConcurrency: expected a whole number ≥ 1/],
    [{ id: 'r', version: '0.2.0', maxFailures: '120%' }, /^maxFailures: expected a percentage/],
    [{ id: 'r', version: '0.2.0', soak: '5 minutes' }, /^soak: expected a duration such as 90s/],
    [
      { id: 'r', patch: { agent: { version: null } } },
      /^patch\.agent\.version: null \(field removal\) is not supported/,
    ],
    [{ id: 'r', version: '0.2.0', canary: 0 }, /^canary: expected cluster ids or a count/],
    [{ id: 'r', version: '0.2.0', selector: { 'bad key!': 'x' } }, /^selector\.bad key!: expected a label key/],
  ])('%j is refused with the field named', (input, message) => {
    expect(() => parseRolloutSpec(input as never)).toThrow(RolloutSpecError);
    expect(() => parseRolloutSpec(input as never)).toThrow(message);
  });

  it('fills defaults', () => {
    expect(parseRolloutSpec({ id: 'r', version: '0.2.0' })).toEqual({
      id: 'r',
      patch: { version: '0.2.0' },
      selector: {},
      maxConcurrency: { count: 1 },
      maxFailures: { count: 0 },
      soakMs: 300_000,
      progressDeadlineMs: 1_800_000,
      autoRollback: false,
    });
  });
});
