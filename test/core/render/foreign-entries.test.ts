import jsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { fieldDiffs, type KubeObject, renderPoolSpirit } from '../../../core/index.ts';
import { foreignEntries, foreignEntriesPatch, type JsonPatchOp } from '../../../core/plan.ts';
import { renderInput } from '../fixtures.ts';
import type { Any } from '../helpers.ts';

async function rendered(kind: string): Promise<KubeObject> {
  const r = await renderPoolSpirit(await renderInput());
  return r.objects.find((o) => o.kind === kind)!;
}

/** The live object as the API holds it after someone else's edit, with a server default the render lacks. */
function edited(obj: KubeObject, edit: (live: Any) => void): KubeObject {
  const live = structuredClone(obj) as Any;
  if (live.kind === 'Deployment')
    for (const c of live.spec.template.spec.containers) c.terminationMessagePath = '/dev/termination-log';
  edit(live);
  return live;
}

const applied = (live: KubeObject, ops: JsonPatchOp[]) =>
  jsonPatch.applyPatch(structuredClone(live), ops as jsonPatch.Operation[], true, false).newDocument;

describe('foreign entries of lists pool-spirit alone decides', () => {
  it('finds nothing in the rendered object itself: a converged object costs no write', async () => {
    for (const kind of ['Deployment', 'Service', 'Secret', 'ConfigMap', 'ServiceAccount']) {
      const obj = await rendered(kind);
      expect(
        foreignEntriesPatch(
          obj,
          edited(obj, () => undefined),
        ),
        kind,
      ).toEqual([]);
    }
  });

  it('removes a patched-in sidecar and volume, guarded by their names, and nothing of its own', async () => {
    const desired = await rendered('Deployment');
    const live = edited(desired, (d) => {
      d.spec.template.spec.containers.splice(1, 0, {
        name: 'exfil',
        image: 'evil/exfil:1',
        volumeMounts: [{ name: 'loot', mountPath: '/loot' }],
      });
      d.spec.template.spec.volumes.push({ name: 'loot', hostPath: { path: '/' } });
    });
    expect(
      foreignEntries(desired, live)
        .map((f) => f.path)
        .sort(),
    ).toEqual(['spec.template.spec.containers[name=exfil]', 'spec.template.spec.volumes[name=loot]']);
    const ops = foreignEntriesPatch(desired, live);
    expect(ops.filter((o) => o.op === 'test')).toEqual([
      { op: 'test', path: '/spec/template/spec/volumes/6/name', value: 'loot' },
      { op: 'test', path: '/spec/template/spec/containers/1/name', value: 'exfil' },
    ]);
    const after = applied(live, ops) as Any;
    expect(after.spec.template.spec.containers.map((c: Any) => c.name)).toEqual(['kube-apiserver', 'etcd', 'agent']);
    expect(fieldDiffs(desired, after)).toEqual([]);
    // The server default on the kept containers is untouched.
    expect(after.spec.template.spec.containers[0].terminationMessagePath).toBe('/dev/termination-log');
  });

  it('removes entries added inside its own containers: an env var, a port, a mount', async () => {
    const desired = await rendered('Deployment');
    const live = edited(desired, (d) => {
      const [apiserver, , agent] = d.spec.template.spec.containers;
      apiserver.env = [{ name: 'LD_PRELOAD', value: '/tmp/x.so' }];
      agent.ports = [{ containerPort: 9999, protocol: 'TCP' }];
      agent.volumeMounts.push({ name: 'etcd-pki', mountPath: '/steal' });
    });
    expect(
      foreignEntries(desired, live)
        .map((f) => f.path)
        .sort(),
    ).toEqual([
      'spec.template.spec.containers[name=agent].ports[containerPort=9999,protocol=TCP]',
      'spec.template.spec.containers[name=agent].volumeMounts[mountPath=/steal]',
      'spec.template.spec.containers[name=kube-apiserver].env[name=LD_PRELOAD]',
    ]);
    const after = applied(live, foreignEntriesPatch(desired, live)) as Any;
    expect(after.spec.template.spec.containers[0].env).toEqual([]);
    expect(after.spec.template.spec.containers[2].ports).toEqual([]);
    expect(fieldDiffs(desired, after)).toEqual([]);
  });

  it('replaces a Service port changed to 8443 in one patch, never leaving the Service without a port', async () => {
    const desired = await rendered('Service');
    const live = edited(desired, (s) => {
      s.spec.ports[0].port = 8443;
    });
    const ops = foreignEntriesPatch(desired, live);
    // The rendered port is appended first, then the foreign one removed: no moment with zero ports.
    expect(ops.map((o) => o.op)).toEqual(['add', 'test', 'test', 'remove']);
    const after = applied(live, ops) as Any;
    expect(after.spec.ports).toEqual((desired as Any).spec.ports);
    expect(after.spec.ports.map((p: Any) => p.port)).toEqual([443]);
    expect(fieldDiffs(desired, after)).toEqual([]);
  });

  it('removes a key added to the Service selector, keeping the rendered ones', async () => {
    const desired = await rendered('Service');
    const live = edited(desired, (s) => {
      s.spec.selector['app.kubernetes.io/name'] = 'pool-spirit';
      s.spec.selector['evil/pods'] = 'yes';
    });
    expect(foreignEntries(desired, live).map((f) => f.path)).toEqual(['spec.selector[evil/pods]']);
    const after = applied(live, foreignEntriesPatch(desired, live)) as Any;
    expect(after.spec.selector).toEqual((desired as Any).spec.selector);
  });

  it('a guard fails the whole patch when the list changed since it was read', async () => {
    const desired = await rendered('Deployment');
    const live = edited(desired, (d) => d.spec.template.spec.containers.push({ name: 'exfil', image: 'evil/exfil:1' }));
    const ops = foreignEntriesPatch(desired, live);
    const moved = edited(live, (d) => d.spec.template.spec.containers.splice(3, 0, { name: 'other', image: 'x' }));
    expect(() => applied(moved, ops)).toThrow(/Test operation failed/);
  });
});
