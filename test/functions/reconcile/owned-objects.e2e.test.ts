import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpMethod, PatchStrategy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import { waitFor } from '../../support/wait.ts';

type Obj = Record<string, any>;

const POOL = 'pool-00';
const BASE = `ps-${POOL}`;
const TRIALS = 10;
const P99_LIMIT_MS = 2_000;

/** Every object the reconciler renders for a pool, by kind and name. */
const OWNED: Array<{ apiVersion: string; kind: string; name: string }> = [
  { apiVersion: 'v1', kind: 'Secret', name: `${BASE}-ca` },
  { apiVersion: 'v1', kind: 'Secret', name: `${BASE}-pki` },
  { apiVersion: 'v1', kind: 'Secret', name: `${BASE}-agent` },
  { apiVersion: 'v1', kind: 'ConfigMap', name: `${BASE}-bootstrap` },
  { apiVersion: 'v1', kind: 'ServiceAccount', name: BASE },
  { apiVersion: 'v1', kind: 'Service', name: BASE },
  { apiVersion: 'apps/v1', kind: 'Deployment', name: BASE },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The whole stack on the built control plane (forwarder, bus, reconcile function, sim kubelet): what someone else does to a
 * pool's objects is undone within seconds, by the watch → notice → reconcile path alone (the audit
 * schedule is minutes away and not waited for).
 */
describe('owned objects on the built control plane: deleted or drifted, back in seconds', () => {
  let fleet: LocalFleet;
  let dir: string;
  let api: RawObjectApi;
  const ref = (o: { apiVersion: string; kind: string; name: string }) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name: o.name, namespace: PRODUCT_NAMESPACE },
  });
  const read = async (o: { apiVersion: string; kind: string; name: string }): Promise<Obj | undefined> => {
    try {
      return (await api.read(ref(o))) as Obj;
    } catch {
      return undefined;
    }
  };
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', name: BASE };
  const service = { apiVersion: 'v1', kind: 'Service', name: BASE };
  const settled = () => fleet.waitConverged(60_000);
  /** Events announcing a new pool CA (Events about the cluster-scoped PoolSpirit go to `default`). */
  const caRotations = async () =>
    ((await api.list('v1', 'Event', 'default')).items as Obj[]).filter(
      (e) => e.reason === 'CARotated' && e.involvedObject?.name === POOL,
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-owned-'));
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 1,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      controlPlane: 'real',
    });
    api = RawObjectApi.fromKubeConfig(fleet.clusters[0].kubeConfig);
    await settled();
  }, 90_000);

  /** Someone else's write → undone (ms), per drift. */
  const driftFixedMs: Record<string, number> = {};

  afterAll(async () => {
    console.log(JSON.stringify({ measure: 'drift written → undone (ms)', results: driftFixedMs }));
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`recreates each owned kind after a deletion, p99 under ${P99_LIMIT_MS} ms`, async () => {
    const results: Record<string, { p50: number; p99: number; max: number; trials: number }> = {};
    for (const owned of OWNED) {
      const times: number[] = [];
      for (let i = 0; i < TRIALS; i++) {
        await settled();
        const before = await read(owned);
        expect(before, `${owned.kind} ${owned.name}`).toBeDefined();
        const started = performance.now();
        await api.delete(ref(owned));
        await waitFor(
          async () => {
            const now = await read(owned);
            return now && now.metadata.uid !== before!.metadata.uid && !now.metadata.deletionTimestamp;
          },
          30_000,
          `${owned.kind} ${owned.name} recreated`,
          5,
        );
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      results[`${owned.kind}/${owned.name}`] = {
        p50: Math.round(percentile(times, 50)),
        p99: Math.round(percentile(times, 99)),
        max: Math.round(times.at(-1)!),
        trials: TRIALS,
      };
    }
    console.log(JSON.stringify({ measure: 'owned-object deletion → recreated (ms)', results }));
    // A deleted CA Secret takes the CA key with it: the new CA is announced, never silent.
    const rotations = await caRotations();
    expect(rotations.length).toBeGreaterThanOrEqual(1);
    expect(rotations[0]).toMatchObject({
      type: 'Warning',
      message: expect.stringMatching(/the pool CA was issued anew \(ca: /),
    });
    for (const [key, r] of Object.entries(results)) expect(r.p99, key).toBeLessThan(P99_LIMIT_MS);
    expect(fleet.bus.deadLetters()).toEqual([]);
  }, 240_000);

  /** Someone else's write, then the time until the reconcile has undone it (at most P99_LIMIT_MS). */
  async function undoneWithin(
    drift: string,
    what: { apiVersion: string; kind: string; name: string },
    intrude: () => Promise<unknown>,
    undone: (live: Obj) => boolean,
  ) {
    await settled();
    const started = performance.now();
    // The write's own answer shows the drift landed, so a test cannot pass on a write that did nothing.
    expect(undone((await intrude()) as Obj), `${drift} written`).toBe(false);
    await waitFor(
      async () => {
        const live = await read(what);
        return live && undone(live);
      },
      P99_LIMIT_MS,
      `${drift} undone`,
      5,
    );
    driftFixedMs[drift] = Math.round(performance.now() - started);
    return (await read(what))!;
  }
  const patchPodSpec = (podSpec: Obj) =>
    api.patch(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: BASE, namespace: PRODUCT_NAMESPACE },
        spec: { template: { spec: podSpec } },
      } as Obj,
      undefined,
      undefined,
      'intruder',
      undefined,
      PatchStrategy.StrategicMergePatch,
    );
  const names = (entries: Obj[] | undefined) => (entries ?? []).map((e) => e.name);

  it('removes a sidecar patched into the Deployment, and the pool becomes Available again', async () => {
    const live = await undoneWithin(
      'sidecar',
      deployment,
      () => patchPodSpec({ containers: [{ name: 'exfil', image: 'evil/exfil:1' }] }),
      (d) => !names(d.spec.template.spec.containers).includes('exfil'),
    );
    expect(names(live.spec.template.spec.containers)).toEqual(['kube-apiserver', 'etcd', 'agent']);
    await settled();
  }, 90_000);

  it('removes a volume added to the pod template', async () => {
    await undoneWithin(
      'volume',
      deployment,
      () => patchPodSpec({ volumes: [{ name: 'loot', emptyDir: {} }] }),
      (d) => !names(d.spec.template.spec.volumes).includes('loot'),
    );
    await settled();
  }, 90_000);

  it('a Service port changed to 8443 ends as the one rendered port 443, not two ports named https', async () => {
    const live = await undoneWithin(
      'servicePort',
      service,
      () =>
        api.requestJson(HttpMethod.PATCH, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/services/${BASE}`, {
          body: [{ op: 'replace', path: '/spec/ports/0/port', value: 8443 }],
          contentType: 'application/json-patch+json',
          query: { fieldManager: 'intruder' },
        }),
      (svc) => JSON.stringify(svc.spec.ports.map((p: Obj) => p.port)) === '[443]',
    );
    expect(names(live.spec.ports)).toEqual(['https']);
    await settled();
  }, 90_000);

  it("replaces a Secret's and a ConfigMap's edited data with the rendered data (seen through a metadata-only watch)", async () => {
    for (const [drift, what] of [
      ['secretData', { apiVersion: 'v1', kind: 'Secret', name: `${BASE}-agent` }],
      ['configMapData', { apiVersion: 'v1', kind: 'ConfigMap', name: `${BASE}-bootstrap` }],
    ] as const) {
      const before = await read(what);
      const key = Object.keys(before!.data).sort()[0];
      const value = what.kind === 'Secret' ? Buffer.from('tampered').toString('base64') : 'tampered';
      const resource = what.kind === 'Secret' ? 'secrets' : 'configmaps';
      await undoneWithin(
        drift,
        what,
        () =>
          api.requestJson(HttpMethod.PATCH, `/api/v1/namespaces/${PRODUCT_NAMESPACE}/${resource}/${what.name}`, {
            body: { data: { [key]: value } },
            contentType: 'application/merge-patch+json',
            query: { fieldManager: 'intruder' },
          }),
        // A tampered certificate is issued anew, not restored: it no longer checks against the CA.
        (live) => (what.kind === 'Secret' ? live.data[key] !== value : live.data[key] === before!.data[key]),
      );
    }
    await settled();
  }, 90_000);

  it('deleting the PoolSpirit (its NodePool still there) keeps the pool CA', async () => {
    await settled();
    const ca = { apiVersion: 'v1', kind: 'Secret', name: `${BASE}-ca` };
    const caBefore = await read(ca);
    const rotationsBefore = (await caRotations()).length;
    const spirit = { apiVersion: 'poolspirit.io/v1alpha1', kind: 'PoolSpirit', metadata: { name: POOL } };
    const spiritBefore = (await api.read(spirit)) as Obj;
    await api.delete(spirit);
    await waitFor(
      async () => {
        const now = (await api.read(spirit).catch(() => undefined)) as Obj | undefined;
        return now && now.metadata.uid !== spiritBefore.metadata.uid;
      },
      30_000,
      'PoolSpirit re-created',
    );
    await settled();
    const caAfter = await read(ca);
    expect(caAfter!.metadata.uid).toBe(caBefore!.metadata.uid);
    expect(caAfter!.data['ca.crt']).toBe(caBefore!.data['ca.crt']);
    // The re-issued serving PKI chains to the same CA.
    const pki = await read({ apiVersion: 'v1', kind: 'Secret', name: `${BASE}-pki` });
    expect(pki!.data['ca.crt']).toBe(caBefore!.data['ca.crt']);
    expect((await caRotations()).length).toBe(rotationsBefore);
  }, 120_000);
});
