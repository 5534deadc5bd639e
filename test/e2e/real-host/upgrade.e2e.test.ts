/**
 * A real upgrade across a local fleet of real host clusters (built kube-apiserver, controller-manager,
 * scheduler): every pool-spirit runs the built kube-apiserver v1.36.3 (bundle
 * 0.1.0), a rollout moves the fleet to bundle 0.2.0, and each pool's pod is replaced by one running the built
 * v1.37.2 — the binary the image tag names — with its pool Available again. The figures go to stdout as JSON.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRollout } from '../../../adapters/state-table/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import type { ProcessKubelet } from '../../../dev/local/kubelet/process-kubelet.ts';
import { call, waitFor } from '../../dev/local/kubelet/process/world.ts';

type Obj = Record<string, any>;
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

describe('rollout 1.36.3 → 1.37.2 across a local fleet on the real control plane, real pool-spirits (2 clusters × 1 pool)', () => {
  let fleet: LocalFleet;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-upgrade-'));
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      kubelet: 'process',
      controlPlane: 'real',
    });
    await fleet.waitConverged(120_000);
  }, 150_000);
  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** What each pool-spirit process runs: the binary, and what its /version says. */
  async function running(): Promise<Array<{ pool: string; binary: string; gitVersion: string }>> {
    const out = [];
    for (const c of fleet.clusters) {
      for (const r of (c.kubelet as ProcessKubelet).poolSpirits()) {
        const binary = readFileSync(`/proc/${r.apiServer.pid}/cmdline`, 'utf8').split('\0')[0]!;
        const version = await call(r.apiServerUrl, r.caPem, 'GET', '/version');
        out.push({
          pool: `${c.id}/${r.podKey}`,
          binary: binary.slice(binary.lastIndexOf('/') + 1),
          gitVersion: String(version.body.gitVersion),
        });
      }
    }
    return out.sort((a, b) => a.pool.localeCompare(b.pool));
  }

  async function currentVersions(): Promise<string[]> {
    const out: string[] = [];
    for (const c of fleet.clusters) {
      const list = (await c.kubeConfig
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: 'poolspirit.io', version: 'v1alpha1', plural: 'poolspirits' })) as {
        items: Obj[];
      };
      for (const ps of list.items) {
        const available = ps.status?.conditions?.some((x: Obj) => x.type === 'Available' && x.status === 'True');
        out.push(`${ps.status?.versions?.current?.apiServer}${available ? '' : ' (not Available)'}`);
      }
    }
    return out;
  }

  it('starts on v1.36.3 and ends on v1.37.2, every pool Available, each pod running the build its image names', async () => {
    expect((await running()).map((r) => [r.binary, r.gitVersion])).toEqual([
      ['kube-apiserver', 'v1.36.3'],
      ['kube-apiserver', 'v1.36.3'],
    ]);
    const started = Date.now();
    await fleet.rollout.invoke({
      command: 'start',
      rollout: {
        id: 'kube-137',
        patch: { version: '0.2.0' },
        canary: ['cluster-01'],
        maxConcurrency: '1',
        soak: '1s',
        progressDeadline: '120s',
        autoRollback: true,
      },
    });
    const state = await waitFor(
      async () => {
        await fleet.rollout.invoke({ command: 'tick', rolloutId: 'kube-137' });
        const s = await readRollout(fleet.table, 'kube-137');
        return s && TERMINAL.includes(s.phase) ? s : undefined;
      },
      240_000,
      'rollout kube-137 to finish',
      500,
    );
    const rolloutMs = Date.now() - started;
    expect(state.phase, state.reason).toBe('Succeeded');
    await waitFor(
      async () => (await currentVersions()).every((v) => v === 'v1.37.2'),
      60_000,
      'every pool Available on v1.37.2',
    );
    const after = await waitFor(
      async () => {
        const r = await running();
        return r.length === 2 && r.every((x) => x.gitVersion === 'v1.37.2') ? r : undefined;
      },
      60_000,
      'both pool-spirits running v1.37.2',
    );
    expect(after.map((r) => r.binary)).toEqual(['kube-apiserver-v1.37.2', 'kube-apiserver-v1.37.2']);
    process.stdout.write(
      `${JSON.stringify({ upgrade: { from: 'v1.36.3', to: 'v1.37.2', clusters: 2, pools: 2, rolloutMs, waves: state.clusters.map((c) => [c.id, c.wave, c.phase]) } })}\n`,
    );
  }, 330_000);
});
