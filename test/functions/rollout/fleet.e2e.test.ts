/**
 * The whole system on a fleet of built control planes (3 clusters × 2 pools, sim kubelet): the rollout function changes
 * PoolSpirits, the forwarders see it, the reconcile re-renders, the sim kubelet rolls the pods, the agent
 * sim reports — and the rollout reads the resulting status. Ticks are driven here (the schedule rule's
 * one-minute tick would be too slow for a test), by invoking the fleet's rollout function.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRollout } from '../../../adapters/state-table/index.ts';
import type { RolloutState } from '../../../core/rollout/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { waitFor } from '../../support/local-cluster.ts';

const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

describe('rollout on a fleet of built control planes: 3 clusters × 2 pools', () => {
  let fleet: LocalFleet;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-rollout-'));
    fleet = await startLocalFleet({
      clusters: 3,
      pools: 2,
      nodesPerPool: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      // The third cluster's kubelet never gets a pool-spirit pod of agent 0.3.0 Ready.
      unhealthyVersions: { 'cluster-03': ['0.3.0'] },
      controlPlane: 'real',
    });
    await fleet.waitConverged(60_000);
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Ticks the rollout (as the schedule would, only faster) until it finishes. */
  async function tickToEnd(id: string, timeoutMs: number): Promise<RolloutState> {
    let maxChanging = 0;
    const state = await waitFor(
      async () => {
        const result = (await fleet.rollout.invoke({ command: 'tick', rolloutId: id })) as {
          rollouts: { clusters: Record<string, number> }[];
        };
        const c = result.rollouts[0].clusters;
        maxChanging = Math.max(maxChanging, (c.Updating ?? 0) + (c.Soaking ?? 0));
        const s = await readRollout(fleet.table, id);
        return s && TERMINAL.includes(s.phase) ? s : undefined;
      },
      timeoutMs,
      `rollout ${id} to finish`,
    );
    expect(maxChanging).toBeLessThanOrEqual(2);
    return state;
  }

  async function agentVersions(): Promise<Record<string, string | undefined>> {
    const out: Record<string, string | undefined> = {};
    for (const c of fleet.clusters) {
      const list = (await c.kubeConfig
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: 'poolspirit.io', version: 'v1alpha1', plural: 'poolspirits' })) as {
        items: any[];
      };
      for (const ps of list.items) out[`${c.id}/${ps.metadata.name}`] = ps.status?.versions?.current?.agent;
    }
    return out;
  }

  it('completes a rollout with a canary and waves', async () => {
    await fleet.rollout.invoke({
      command: 'start',
      rollout: {
        id: 'agent-020',
        patch: { agent: { version: '0.2.0' } },
        canary: ['cluster-02'],
        maxConcurrency: '2',
        soak: '1s',
        progressDeadline: '40s',
        autoRollback: true,
      },
    });
    const state = await tickToEnd('agent-020', 60_000);
    expect(state.phase, state.reason).toBe('Succeeded');
    expect(state.clusters.map((c) => [c.id, c.wave, c.phase])).toEqual([
      ['cluster-02', 1, 'Succeeded'],
      ['cluster-01', 2, 'Succeeded'],
      ['cluster-03', 2, 'Succeeded'],
    ]);
    expect(Object.values(await agentVersions())).toEqual(Array(6).fill('0.2.0'));
  }, 70_000);

  it('stops and rolls back by itself when the new version never becomes healthy in one cluster', async () => {
    await fleet.rollout.invoke({
      command: 'start',
      rollout: {
        id: 'agent-030',
        patch: { agent: { version: '0.3.0' } },
        canary: 1,
        maxConcurrency: '2',
        soak: '1s',
        progressDeadline: '15s',
        autoRollback: true,
      },
    });
    const state = await tickToEnd('agent-030', 60_000);
    expect(state.phase, state.reason).toBe('RolledBack');
    expect(state.reason).toMatch(/cluster-03/);
    const bad = state.clusters.find((c) => c.id === 'cluster-03')!;
    const clusters = JSON.stringify(
      state.clusters.map(({ id, phase, failed, reason }) => ({ id, phase, failed, reason })),
    );
    expect(bad, clusters).toMatchObject({ phase: 'RolledBack', failed: true });
    expect(bad.reason, clusters).toMatch(/progress deadline \(15s\) passed: .*not available/);
    expect(state.clusters.filter((c) => c.id !== 'cluster-03').every((c) => c.phase === 'RolledBack')).toBe(true);
    // The previous version is back everywhere it was applied, and the pools are healthy again on it.
    await fleet.waitConverged(30_000);
    await waitFor(
      async () => Object.values(await agentVersions()).every((v) => v === '0.2.0'),
      30_000,
      'agent 0.2.0 running everywhere again',
    );
    expect(fleet.bus.deadLetters()).toEqual([]);
  }, 90_000);
});
