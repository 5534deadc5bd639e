import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer } from '../../adapters/kubernetes/informer.ts';
import { watchedResources } from '../../forwarder/watched-resources.ts';
import { type TestClusterAccess, waitFor } from '../support/local-cluster.ts';
import { startRealTestCluster } from '../support/real-cluster.ts';

type Obj = Record<string, any>;
const NS = 'pool-spirit-system';

/** The forwarder's Secret watch, against the built kube-apiserver: what reaches the process is metadata, never data. */
describe('owned Secrets are watched as metadata only', () => {
  let t: TestClusterAccess;
  let informer: Informer<Obj> | undefined;

  beforeAll(async () => {
    t = await startRealTestCluster({ name: 'metadata-only', crds: false, controllers: false });
    await t.api.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  }, 30_000);

  afterAll(async () => {
    informer?.stop();
    await t?.stop();
  });

  it('lists and watches Secrets without their data, and only those with the product labels', async () => {
    const secret = (name: string, labels: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS, labels },
      data: { 'ca.key': Buffer.from('PRIVATE KEY').toString('base64') },
    });
    const labels = { 'app.kubernetes.io/managed-by': 'pool-spirit', 'poolspirit.io/pool': 'p' };
    await t.api.create(secret('ps-p-ca', labels));
    await t.api.create(secret('unrelated', {}));
    const resource = watchedResources(NS).find((r) => r.kind === 'Secret')!;
    const seen: Obj[] = [];
    // The same resource definition, remembering whole what it is handed (the forwarder keeps a summary).
    informer = new Informer<Obj>(
      t.kc,
      {
        ...resource,
        listedByRelevance: false,
        summarize: (o) => {
          seen.push(o);
          return { resourceVersion: o.metadata?.resourceVersion };
        },
        isRelevant: () => true,
      },
      { onChange: async () => undefined },
    );
    void informer.run();
    await informer.hasSynced;
    await t.api.create(secret('ps-p-pki', labels));
    await waitFor(() => seen.some((o) => o.metadata?.name === 'ps-p-pki'), 10_000, 'the watched Secret');
    expect(seen.map((o) => o.metadata.name).sort()).toEqual(['ps-p-ca', 'ps-p-pki']);
    for (const o of seen) {
      expect(o.data).toBeUndefined();
      expect(JSON.stringify(o)).not.toContain(Buffer.from('PRIVATE KEY').toString('base64'));
    }
  });
});
