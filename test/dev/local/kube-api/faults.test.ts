import { describe, expect, it } from 'vitest';
import { createFaultInjector, FaultSpecError, parseFaultSpec } from '../../../../dev/local/kube-api/faults.ts';

describe('fault injector', () => {
  it('injects nothing without config', () => {
    const f = createFaultInjector();
    expect(f.decide('create', 'pods')).toEqual({ delayMs: 0 });
  });

  it('fails roughly errorRate of matching requests, only for matching verbs and resources', () => {
    const f = createFaultInjector({
      seed: 42,
      rules: [{ verbs: ['create'], resources: ['pods'], errorRate: 0.25, errorStatus: 429 }],
    });
    let failed = 0;
    for (let i = 0; i < 4000; i++) {
      const d = f.decide('create', 'pods');
      if (d.failStatus) {
        expect(d.failStatus).toBe(429);
        failed++;
      }
    }
    expect(failed / 4000).toBeGreaterThan(0.22);
    expect(failed / 4000).toBeLessThan(0.28);
    expect(f.decide('get', 'pods').failStatus).toBeUndefined();
    expect(f.decide('create', 'configmaps').failStatus).toBeUndefined();
  });

  it('is deterministic for a seed and differs across seeds', () => {
    const run = (seed: number) => {
      const f = createFaultInjector({ seed, rules: [{ errorRate: 0.5 }] });
      return Array.from({ length: 64 }, () => f.decide('get', 'pods').failStatus ?? 0).join(',');
    };
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
  });

  it('combines rules: largest latency, shortest watch drop, 500 by default', () => {
    const f = createFaultInjector({
      seed: 1,
      rules: [
        { latencyMs: 20, watchDropAfterMs: 5000 },
        { resources: ['pods'], latencyMs: 50, watchDropAfterMs: 100, errorRate: 1 },
      ],
    });
    expect(f.decide('watch', 'pods')).toEqual({ delayMs: 50, dropWatchAfterMs: 100, failStatus: 500 });
    expect(f.decide('watch', 'pods/status')).toEqual({ delayMs: 50, dropWatchAfterMs: 100, failStatus: 500 });
    expect(f.decide('list', 'nodes')).toEqual({ delayMs: 20 });
  });

  it('setConfig replaces the rules and validates them', () => {
    const f = createFaultInjector();
    f.setConfig({ seed: 3, rules: [{ errorRate: 1, errorStatus: 429 }] });
    expect(f.decide('get', 'x').failStatus).toBe(429);
    expect(() => f.setConfig({ rules: [{ errorRate: 2 }] })).toThrow('errorRate must be a number between 0 and 1');
    expect(() => f.setConfig({ rules: [{ verbs: ['destroy'] }] })).toThrow('unknown verb "destroy"');
  });
});

describe('parseFaultSpec', () => {
  it('parses the CLI form', () => {
    expect(parseFaultSpec('verbs=create,update;resources=pods;error=0.1:429;latency=20ms')).toEqual({
      rules: [{ verbs: ['create', 'update'], resources: ['pods'], errorRate: 0.1, errorStatus: 429, latencyMs: 20 }],
    });
    expect(parseFaultSpec('seed=9 | error=5% | watchdrop=1.5s; resources=nodepools')).toEqual({
      seed: 9,
      rules: [{ errorRate: 0.05 }, { watchDropAfterMs: 1500, resources: ['nodepools'] }],
    });
  });

  it.each([
    ['', 'fault spec is empty'],
    ['error=2', 'fault spec rule 1, error: expected an error rate between 0 and 1'],
    ['error=0.1:404', 'status must be 409, 429 or 500, got "404"'],
    ['latency=fast', 'expected a duration like 20ms'],
    ['colour=red', 'unknown key "colour"'],
    ['verbs', '"verbs" needs a value'],
    ['seed=-1', 'seed must be a non-negative integer'],
    ['verbs=smash', 'unknown verb "smash"'],
  ])('rejects %j clearly', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(FaultSpecError);
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });
});
