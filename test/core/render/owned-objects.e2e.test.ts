/**
 * What owned-object drift correction rests on, checked against the real kube-apiserver 1.36 (the local real
 * host control plane) rather than the
 * repository's local API: a metadata-only list and watch of Secrets sends no data; server-side apply with
 * force keeps list entries another manager added (why the reconcile removes them itself); and the guarded
 * JSON patch the core builds is accepted and leaves exactly the rendered lists.
 */
import { readFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterClient } from '../../../adapters/kubernetes/client.ts';
import { connectionFromKubeconfig } from '../../../adapters/kubernetes/http/kubeconfig.ts';
import type { ClusterClient } from '../../../adapters/kubernetes/index.ts';
import { Informer } from '../../../adapters/kubernetes/informer.ts';
import { DEFAULT_NAMESPACE, fieldDiffs, type KubeObject, renderPoolSpirit } from '../../../core/index.ts';
import { foreignEntriesPatch } from '../../../core/plan.ts';
import { watchedResources } from '../../../forwarder/watched-resources.ts';
import { type KubeHarness, startRealHostApiserver } from '../../support/real-apiserver.ts';
import { waitFor } from '../../support/wait.ts';
import { renderInput } from '../fixtures.ts';

type Obj = Record<string, any>;
const NS = DEFAULT_NAMESPACE;

describe('owned objects on the real kube-apiserver', () => {
  let real: KubeHarness;
  let client: ClusterClient;
  let kc: KubeConfig;
  let informer: Informer<Obj> | undefined;
  /** The rendered objects, without owner references (no PoolSpirit or NodePool exists on this apiserver). */
  let rendered: KubeObject[];
  const unowned = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined } });
  const intruderPatch = (path: string, body: unknown) =>
    real.raw('PATCH', `${path}?fieldManager=intruder`, {
      body: JSON.stringify(body),
      contentType: 'application/strategic-merge-patch+json',
    });

  beforeAll(async () => {
    // The host control plane: a pool-spirit's own apiserver serves no apps/v1.
    real = await startRealHostApiserver();
    await real.kubectl('create', 'namespace', NS);
    const text = await readFile(real.kubeconfig, 'utf8');
    client = createClusterClient(connectionFromKubeconfig(text));
    kc = new KubeConfig();
    kc.loadFromString(text);
    rendered = (await renderPoolSpirit(await renderInput())).objects.map(unowned);
  }, 120_000);

  afterAll(async () => {
    informer?.stop();
    await real?.stop();
  });

  it("lists and watches the pool's Secrets as metadata only: no data reaches the watcher", async () => {
    const [ca, pki] = rendered.filter((o) => o.kind === 'Secret');
    await client.apply(ca);
    const seen: Obj[] = [];
    const resource = watchedResources(NS).find((r) => r.kind === 'Secret')!;
    informer = new Informer<Obj>(
      kc,
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
    await client.apply(pki);
    await waitFor(() => seen.some((o) => o.metadata?.name === pki.metadata.name), 10_000, 'the watched Secret');
    expect(seen.map((o) => o.metadata.name)).toEqual(expect.arrayContaining([ca.metadata.name, pki.metadata.name]));
    for (const o of seen) {
      expect(o.data).toBeUndefined();
      expect(o.metadata.managedFields?.[0]?.manager).toBe('pool-spirit-reconciler');
    }
  });

  it('forwards a key someone else removed from a Secret, which leaves no managedFields entry of theirs', async () => {
    const agent = rendered.filter((o) => o.kind === 'Secret')[2]!;
    await client.apply(agent);
    const resource = watchedResources(NS).find((r) => r.kind === 'Secret')!;
    const changes: string[] = [];
    const watcher = new Informer(kc, resource, {
      onChange: async (type, key) => void changes.push(`${type} ${key}`),
    });
    void watcher.run();
    try {
      await watcher.hasSynced;
      const path = `/api/v1/namespaces/${NS}/secrets/${agent.metadata.name}`;
      const key = Object.keys(agent.data as Record<string, string>)[0]!;
      const removed = await real.raw('PATCH', `${path}?fieldManager=intruder`, {
        body: JSON.stringify([{ op: 'remove', path: `/data/${key}` }]),
        contentType: 'application/json-patch+json',
      });
      expect(removed.status).toBe(200);
      // The real apiserver gives the remover no entry: only the reconciler's field set shrinks.
      const managers = (JSON.parse(removed.body) as Obj).metadata.managedFields.map((f: Obj) => f.manager);
      expect(managers).toEqual(['pool-spirit-reconciler']);
      await waitFor(
        () => changes.includes(`MODIFIED ${NS}/${agent.metadata.name}`),
        10_000,
        'the removal forwarded as a change',
      );
    } finally {
      watcher.stop();
    }
  });

  it('keeps a sidecar through a forced apply; the core patch removes it and leaves the rendered Deployment', async () => {
    const deployment = rendered.find((o) => o.kind === 'Deployment')!;
    await client.apply(deployment);
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/${deployment.metadata.name}`;
    const patched = await intruderPatch(path, {
      spec: {
        template: {
          spec: { containers: [{ name: 'exfil', image: 'evil/exfil:1' }], volumes: [{ name: 'loot', emptyDir: {} }] },
        },
      },
    });
    expect(patched.status, patched.body).toBe(200);
    // Server-side apply with force: the rendered fields are ours, the sidecar stays its manager's.
    const reapplied = (await client.apply(deployment)) as Obj;
    expect(reapplied.spec.template.spec.containers.map((c: Obj) => c.name)).toContain('exfil');

    const ops = foreignEntriesPatch(deployment, reapplied as KubeObject);
    const after = (await client.patchJson(
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: deployment.metadata.name },
      ops,
    )) as Obj;
    expect(after.spec.template.spec.containers.map((c: Obj) => c.name)).toEqual(['kube-apiserver', 'etcd', 'agent']);
    expect(after.spec.template.spec.volumes.map((v: Obj) => v.name)).not.toContain('loot');
    expect(fieldDiffs(deployment, after)).toEqual([]);
    expect(foreignEntriesPatch(deployment, after as KubeObject)).toEqual([]);
  });

  it('a Service port changed to 8443: the patch leaves the one rendered port, which real validation accepts', async () => {
    const service = rendered.find((o) => o.kind === 'Service')!;
    await client.apply(service);
    const path = `/api/v1/namespaces/${NS}/services/${service.metadata.name}`;
    const changed = await real.raw('PATCH', `${path}?fieldManager=intruder`, {
      body: JSON.stringify([{ op: 'replace', path: '/spec/ports/0/port', value: 8443 }]),
      contentType: 'application/json-patch+json',
    });
    expect(changed.status, changed.body).toBe(200);
    const live = JSON.parse(changed.body) as KubeObject;
    const after = (await client.patchJson(
      { apiVersion: 'v1', kind: 'Service', namespace: NS, name: service.metadata.name },
      foreignEntriesPatch(service, live),
    )) as Obj;
    expect(after.spec.ports.map((p: Obj) => [p.name, p.port])).toEqual([['https', 443]]);
    expect(fieldDiffs(service, after)).toEqual([]);
  });

  it('a guard refuses the patch when the list changed since it was read (422), removing nothing', async () => {
    const deployment = rendered.find((o) => o.kind === 'Deployment')!;
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/${deployment.metadata.name}`;
    const first = JSON.parse(
      (
        await intruderPatch(path, {
          spec: { template: { spec: { containers: [{ name: 'exfil', image: 'evil/exfil:1' }] } } },
        })
      ).body,
    ) as KubeObject;
    const ops = foreignEntriesPatch(deployment, first);
    // Someone else edits the list in between: a second sidecar, placed first.
    await real.raw('PATCH', `${path}?fieldManager=intruder`, {
      body: JSON.stringify([
        { op: 'add', path: '/spec/template/spec/containers/0', value: { name: 'other', image: 'x' } },
      ]),
      contentType: 'application/json-patch+json',
    });
    await expect(
      client.patchJson(
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: deployment.metadata.name },
        ops,
      ),
    ).rejects.toMatchObject({ code: 422 });
    const live = JSON.parse((await real.raw('GET', path)).body) as Obj;
    expect(live.spec.template.spec.containers.map((c: Obj) => c.name).sort()).toEqual([
      'agent',
      'etcd',
      'exfil',
      'kube-apiserver',
      'other',
    ]);
  });
});
