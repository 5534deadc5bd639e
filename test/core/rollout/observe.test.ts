import { describe, expect, it } from 'vitest';
import type { LivePoolSpirit } from '../../../core/rollout/index.ts';
import {
  mergePatch,
  observePoolSpirit,
  projectOnto,
  specMatchesPatch,
  specMatchesSnapshot,
} from '../../../core/rollout/index.ts';

const cond = (type: string, status: 'True' | 'False', reason = type, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

function spirit(
  over: {
    generation?: number;
    observed?: number;
    spec?: Record<string, unknown>;
    available?: boolean;
    leader?: boolean;
    current?: Record<string, string>;
    desired?: Record<string, string>;
    phase?: string;
    message?: string;
  } = {},
): LivePoolSpirit {
  const versions = { bundle: '0.2.0', apiServer: 'v1.36.3', etcd: '3.6.16-0', agent: '0.1.0' };
  return {
    metadata: { name: 'p', generation: over.generation ?? 2 },
    spec: over.spec ?? { nodePool: 'p', version: '0.2.0' },
    status: {
      observedGeneration: over.observed ?? 2,
      phase: (over.phase ?? 'Running') as never,
      conditions: [
        cond(
          'Available',
          over.available === false ? 'False' : 'True',
          over.available === false ? 'WorkloadNotReady' : 'Available',
          over.message ?? '',
        ),
        cond(
          'LeaderElected',
          over.leader === false ? 'False' : 'True',
          over.leader === false ? 'LeaderStale' : 'Elected',
        ),
      ],
      versions: { desired: over.desired ?? versions, current: over.current ?? versions },
    },
  };
}

const patch = { version: '0.2.0' };

describe('observePoolSpirit', () => {
  it.each([
    [
      'healthy at the target',
      spirit(),
      { specAtTarget: true, available: true, atVersion: true, leaderHealthy: true },
      undefined,
    ],
    [
      'spec not changed yet',
      spirit({ spec: { nodePool: 'p', version: '0.1.0' } }),
      { specAtTarget: false },
      'spec not updated yet',
    ],
    [
      'generation not yet seen by the reconciler',
      spirit({ observed: 1 }),
      { available: false, atVersion: false },
      'generation 2 not yet observed by the reconciler',
    ],
    [
      'not available',
      spirit({ available: false, message: 'pod not ready' }),
      { available: false },
      'not available: WorkloadNotReady (pod not ready)',
    ],
    [
      'old bundle still running',
      spirit({ current: { bundle: '0.1.0', agent: '0.1.0' } }),
      { atVersion: false },
      /^running bundle=0\.1\.0,agent=0\.1\.0, want bundle=0\.2\.0/,
    ],
    ['no healthy leader', spirit({ leader: false }), { leaderHealthy: false }, 'no healthy leader: LeaderStale'],
    [
      'invalid spec',
      spirit({ phase: 'Invalid', available: false, message: 'invalid spec: spec.version: unknown bundle "0.2.0"' }),
      { invalid: 'invalid spec: spec.version: unknown bundle "0.2.0"' },
      /unknown bundle/,
    ],
  ])('%s', (_name, live, expected, reason) => {
    const obs = observePoolSpirit(live, patch);
    expect(obs).toMatchObject(expected);
    if (reason === undefined) expect(obs.reason).toBeUndefined();
    else expect(obs.reason).toMatch(reason);
  });

  it('a component change counts once the running versions match what the spec asks', () => {
    const p = { agent: { version: '0.2.0' } };
    const desired = { bundle: '0.1.0', agent: '0.2.0' };
    expect(
      observePoolSpirit(
        spirit({
          spec: { nodePool: 'p', agent: { version: '0.2.0' } },
          desired,
          current: { bundle: '0.1.0', agent: '0.1.0' },
        }),
        p,
      ).atVersion,
    ).toBe(false);
    expect(
      observePoolSpirit(spirit({ spec: { nodePool: 'p', agent: { version: '0.2.0' } }, desired, current: desired }), p)
        .atVersion,
    ).toBe(true);
  });
});

describe('spec patch', () => {
  const patch = { version: '0.2.0', agent: { version: '0.2.0', extraArgs: { v: '2' } } };
  const before = { nodePool: 'p', version: '0.1.0', agent: { image: 'x' } };

  it('snapshots only the patched fields, and knows when they are back', () => {
    const snapshot = projectOnto(before, patch);
    expect(snapshot).toEqual({ version: '0.1.0' });
    const after = mergePatch(before, patch);
    expect(specMatchesPatch(after, patch)).toBe(true);
    expect(specMatchesSnapshot(after, patch, snapshot)).toBe(false);
    expect(specMatchesSnapshot(before, patch, snapshot)).toBe(true);
    // A field the snapshot lacked must no longer hold the rollout's value.
    expect(specMatchesSnapshot({ ...before, agent: { image: 'x', version: '0.2.0' } }, patch, snapshot)).toBe(false);
  });

  it('compares arrays and objects whole, key order aside', () => {
    const p = { overrides: [{ op: 'add', path: '/a', value: 1 }] };
    expect(specMatchesPatch({ overrides: [{ value: 1, path: '/a', op: 'add' }] }, p)).toBe(true);
    expect(
      specMatchesPatch(
        {
          overrides: [
            { op: 'add', path: '/a', value: 1 },
            { op: 'remove', path: '/b' },
          ],
        },
        p,
      ),
    ).toBe(false);
  });
});
