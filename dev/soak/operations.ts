/**
 * The random operations a user, an operator or another controller performs on the fleet. Each draws its
 * target from the soak's seeded PRNG, goes through the cluster's API (and so through the injected faults:
 * a refused write counts as a failed operation, not a violation) and records what the invariants must
 * then expect.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpMethod } from '@kubernetes/client-node';
import { checkServerUrl } from '../../adapters/cluster-access/policy.ts';
import { registerCluster } from '../../adapters/state-table/index.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../events/source.ts';
import type { FleetCluster } from '../local/fleet/fleet.ts';
import { localApiOf } from '../local/fleet/fleet.ts';
import { edgeNode, NODEPOOL_LABEL, nodePool } from '../local/fleet/seed.ts';
import { isReady, type Obj, type ObjStatus, OWNED_KINDS, ownedPool, poolOf, readCluster } from './cluster-view.ts';
import { FOREIGN_CONTAINER, FOREIGN_PORT } from './invariants.ts';
import type { SoakWorld } from './world.ts';

const NS = 'pool-spirit-system';
const SPIRITS = '/apis/poolspirit.io/v1alpha1/poolspirits';
const POOLS = '/apis/apps.openyurt.io/v1beta1/nodepools';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

/** Thrown when an operation found nothing to act on (counted apart from failures). */
export class NothingToDo extends Error {}

type Op = (w: SoakWorld, c: FleetCluster) => Promise<void>;

const livePools = async (c: FleetCluster) =>
  (await readCluster(localApiOf(c).storage)).pools.filter(
    (p) => !p.metadata.deletionTimestamp && p.spec?.type === 'Edge',
  );

async function pickPool(w: SoakWorld, c: FleetCluster): Promise<string> {
  const pool = w.rng.pick(await livePools(c));
  if (!pool) throw new NothingToDo();
  return pool.metadata.name;
}

async function pickNode(w: SoakWorld, c: FleetCluster, filter: (n: Obj) => boolean = () => true): Promise<Obj> {
  const node = w.rng.pick((await readCluster(localApiOf(c).storage)).nodes.filter((n) => poolOf(n) && filter(n)));
  if (!node) throw new NothingToDo();
  return node;
}

async function addNode(w: SoakWorld, c: FleetCluster, ready: boolean): Promise<void> {
  const pool = await pickPool(w, c);
  const node = edgeNode(`${pool}-soak-${w.nextId++}`, pool, ready);
  const stored = await w.api(c).createJson(node);
  // The local API keeps a Node's status on create; kube-apiserver would not, so it is set either way.
  if (isReady({ status: stored.status as ObjStatus }) !== ready)
    await w.api(c).requestJson(HttpMethod.PUT, `/api/v1/nodes/${node.metadata!.name}/status`, {
      body: { ...stored, status: node.status },
    });
  w.touch(c.id, pool);
}

async function setReadiness(w: SoakWorld, c: FleetCluster): Promise<void> {
  const node = await pickNode(w, c);
  const ready = !isReady(node);
  const conditions = [
    {
      type: 'Ready',
      status: ready ? 'True' : 'False',
      reason: ready ? 'KubeletReady' : 'KubeletNotReady',
      lastTransitionTime: new Date().toISOString(),
    },
  ];
  await w.api(c).requestJson(HttpMethod.PATCH, `/api/v1/nodes/${node.metadata.name}/status`, {
    body: { status: { conditions } },
    contentType: 'application/strategic-merge-patch+json',
  });
  w.touch(c.id, poolOf(node)!);
}

/** `spec` is a JSON merge patch of the PoolSpirit's spec (null removes a field). */
async function patchSpirit(w: SoakWorld, c: FleetCluster, pool: string, spec: Record<string, unknown>): Promise<void> {
  await w.api(c).requestJson(HttpMethod.PATCH, `${SPIRITS}/${pool}`, {
    body: { spec },
    contentType: MERGE,
    query: { fieldManager: 'soak-operator' },
  });
  w.touch(c.id, pool);
}

async function pickOwned(
  w: SoakWorld,
  c: FleetCluster,
  kinds: string[],
): Promise<{ kind: keyof typeof OWNED_KINDS; obj: Obj }> {
  const view = await readCluster(localApiOf(c).storage);
  const live = new Set(view.pools.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name));
  const picked = w.rng.pick(
    view.owned.filter(
      (o) => kinds.includes(o.kind) && live.has(ownedPool(o.obj) ?? '') && !o.obj.metadata.deletionTimestamp,
    ),
  );
  if (!picked) throw new NothingToDo();
  return picked;
}

const ownedPath = (kind: keyof typeof OWNED_KINDS, name: string) =>
  `${OWNED_KINDS[kind].path}/namespaces/${NS}/${OWNED_KINDS[kind].resource}/${name}`;

/** Bad registrations, as an operator might try: each must be refused by the CLI's check and, written to the registry anyway, never reached. */
const BAD_ACCESS = [
  { url: 'http://169.254.169.254/latest/meta-data', why: 'instance metadata address' },
  { url: 'http://[fd00:ec2::254]/', why: 'IPv6 metadata address' },
  { url: 'http://metadata.google.internal/', why: 'metadata host name' },
  { url: 'http://10.0.0.1:6443', why: 'plain http off loopback' },
  { url: 'https://user:pw@127.0.0.1:6443', why: 'credentials in the URL' },
];

function execKubeconfig(name: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `current-context: ${name}`,
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    '    server: http://127.0.0.1:1',
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}`,
    'users:',
    `- name: ${name}`,
    '  user:',
    '    exec:',
    '      apiVersion: client.authentication.k8s.io/v1',
    '      command: /bin/sh',
    '      args: ["-c", "echo soak"]',
    '',
  ].join('\n');
}

export const OPERATIONS: Record<string, { weight: number; run: Op }> = {
  'pool-create': {
    weight: 3,
    async run(w, c) {
      const name = `soak-${w.nextId++}`;
      await w.api(c).createJson(nodePool(name, 'Edge'));
      w.touch(c.id, name);
      for (let j = 0; j < w.rng.between(1, 2); j++) await w.api(c).createJson(edgeNode(`${name}-node-${j}`, name));
    },
  },
  'pool-delete': {
    weight: 2,
    async run(w, c) {
      const pools = await livePools(c);
      // Keep a few pools per cluster so every other operation has something to act on.
      if (pools.length <= Math.max(2, Math.floor(w.opts.pools / 2))) throw new NothingToDo();
      const pool = w.rng.pick(pools)!.metadata.name;
      await w.api(c).requestJson(HttpMethod.DELETE, `${POOLS}/${pool}`);
      w.deletions.set(`${c.id}/${pool}`, Date.now());
      w.journal.add('pool-delete', c.id, pool);
    },
  },
  'node-add-ready': { weight: 3, run: (w, c) => addNode(w, c, true) },
  'node-add-notready': { weight: 2, run: (w, c) => addNode(w, c, false) },
  'node-remove': {
    weight: 2,
    async run(w, c) {
      const node = await pickNode(w, c);
      await w.api(c).requestJson(HttpMethod.DELETE, `/api/v1/nodes/${node.metadata.name}`);
      w.touch(c.id, poolOf(node)!);
    },
  },
  'node-relabel': {
    weight: 2,
    async run(w, c) {
      const node = await pickNode(w, c);
      const to = await pickPool(w, c);
      await w.api(c).requestJson(HttpMethod.PATCH, `/api/v1/nodes/${node.metadata.name}`, {
        body: { metadata: { labels: { [NODEPOOL_LABEL]: to } } },
        contentType: MERGE,
      });
      w.touch(c.id, poolOf(node)!);
      w.touch(c.id, to);
    },
  },
  'node-readiness': { weight: 3, run: setReadiness },
  'spec-valid': {
    weight: 3,
    async run(w, c) {
      const pool = await pickPool(w, c);
      if (w.invalidSpec.has(`${c.id}/${pool}`)) throw new NothingToDo();
      await patchSpirit(w, c, pool, {
        apiServer: { resources: { requests: { cpu: w.rng.pick(['100m', '150m', '200m', '250m']) } } },
      });
    },
  },
  'spec-invalid': {
    weight: 2,
    async run(w, c) {
      const pool = await pickPool(w, c);
      // A flag pool-spirit owns: the reconciler must refuse the spec (phase Invalid), naming the field.
      await patchSpirit(w, c, pool, { apiServer: { extraArgs: { 'etcd-servers': 'https://10.0.0.1:2379' } } });
      w.invalidSpec.add(`${c.id}/${pool}`);
    },
  },
  'spec-revert': {
    weight: 3,
    async run(w, c) {
      const key = w.rng.pick([...w.invalidSpec].filter((k) => k.startsWith(`${c.id}/`)));
      if (!key) throw new NothingToDo();
      const pool = key.slice(c.id.length + 1);
      await patchSpirit(w, c, pool, { apiServer: { extraArgs: null } }).catch((err) => {
        if ((err as { code?: number }).code !== 404) throw err;
      });
      w.invalidSpec.delete(key);
    },
  },
  'spec-schema-invalid': {
    weight: 1,
    async run(w, c) {
      const pool = await pickPool(w, c);
      // Below the CRD's minimum: the API must refuse it, so nothing reaches the reconciler.
      try {
        await patchSpirit(w, c, pool, { etcd: { storage: { snapshotCount: 5 } } });
      } catch (err) {
        if ((err as { code?: number }).code === 422) return;
        throw err;
      }
      await patchSpirit(w, c, pool, { etcd: { storage: { snapshotCount: null } } });
      w.violate('schema', `a PoolSpirit spec below the CRD minimum was accepted (${c.id}/${pool})`, {});
    },
  },
  'owned-delete': {
    weight: 4,
    async run(w, c) {
      const { kind, obj } = await pickOwned(w, c, Object.keys(OWNED_KINDS));
      await w.api(c).requestJson(HttpMethod.DELETE, ownedPath(kind, obj.metadata.name));
      w.touch(c.id, ownedPool(obj)!);
    },
  },
  'owned-modify': {
    weight: 3,
    async run(w, c) {
      const { kind, obj } = await pickOwned(w, c, ['ConfigMap', 'Secret', 'Deployment', 'ServiceAccount']);
      const key = Object.keys(obj.data ?? {})[0];
      const body =
        kind === 'ConfigMap' && key
          ? { data: { [key]: 'soak-drift' } }
          : kind === 'Secret' && key
            ? { data: { [key]: Buffer.from('soak-drift').toString('base64') } }
            : kind === 'Deployment'
              ? { spec: { template: { metadata: { annotations: { 'soak/drift': String(w.nextId++) } } } } }
              : { metadata: { labels: { 'soak-drift': 'yes' } } };
      await w.api(c).requestJson(HttpMethod.PATCH, ownedPath(kind, obj.metadata.name), {
        body,
        contentType: MERGE,
        query: { fieldManager: 'soak-intruder' },
      });
      w.touch(c.id, ownedPool(obj)!);
    },
  },
  'foreign-sidecar': {
    weight: 2,
    async run(w, c) {
      const { obj } = await pickOwned(w, c, ['Deployment']);
      const patch = [
        {
          op: 'add',
          path: '/spec/template/spec/containers/-',
          value: { name: FOREIGN_CONTAINER, image: 'registry.example/sidecar:1' },
        },
      ];
      await w.api(c).requestJson(HttpMethod.PATCH, ownedPath('Deployment', obj.metadata.name), {
        body: patch,
        contentType: JSON_PATCH,
        query: { fieldManager: 'soak-intruder' },
      });
      w.touch(c.id, ownedPool(obj)!);
    },
  },
  'foreign-port': {
    weight: 2,
    async run(w, c) {
      const { obj } = await pickOwned(w, c, ['Service']);
      const patch = [
        {
          op: 'add',
          path: '/spec/ports/-',
          value: { name: FOREIGN_PORT, port: 9443, targetPort: 9443, protocol: 'TCP' },
        },
      ];
      await w.api(c).requestJson(HttpMethod.PATCH, ownedPath('Service', obj.metadata.name), {
        body: patch,
        contentType: JSON_PATCH,
        query: { fieldManager: 'soak-intruder' },
      });
      w.touch(c.id, ownedPool(obj)!);
    },
  },
  'rollout-start': {
    weight: 1,
    async run(w) {
      if (w.rollouts.size) throw new NothingToDo();
      const id = `soak-rollout-${w.nextId++}`;
      await w.fleet.rollout.invoke({
        command: 'start',
        rollout: {
          id,
          patch: { agent: { version: w.rng.pick(['0.2.0', '0.3.0', '0.4.0']) } },
          ...(w.fleet.clusters.length > 1 ? { canary: 1 } : {}),
          maxConcurrency: '2',
          soak: '1s',
          progressDeadline: '30s',
          autoRollback: true,
        },
      });
      w.rollouts.add(id);
      for (const c of w.fleet.clusters) for (const p of await livePools(c)) w.touch(c.id, p.metadata.name);
    },
  },
  'rollout-abort': {
    weight: 1,
    async run(w) {
      const id = w.rng.pick([...w.rollouts]);
      if (!id) throw new NothingToDo();
      await w.fleet.rollout.invoke({ command: 'abort', rolloutId: id });
      w.rollouts.delete(id);
    },
  },
  'cluster-register-bad': {
    weight: 1,
    async run(w) {
      const bad = w.rng.pick(BAD_ACCESS)!;
      let refused = false;
      try {
        checkServerUrl(bad.url, '--url');
      } catch {
        refused = true;
      }
      if (!refused) w.violate('registration', `spiritctl clusters add would accept ${bad.why}`, { why: bad.why });
      // Written past the CLI (as a hand-edited registry item would be): the registry refuses it as well.
      const id = `bad-${w.nextId++}`;
      try {
        await registerCluster(
          w.fleet.table,
          { id, access: { kind: 'url', url: bad.url }, labels: { environment: 'soak-bad' } },
          new Date(),
        );
      } catch {
        // A kubeconfig file the CLI would refuse (an exec credential), registered by path: only the
        // functions' own load can refuse it, and every event for that cluster is then input that cannot succeed.
        const path = join(w.opts.stateDir, `${id}.kubeconfig`);
        await writeFile(path, execKubeconfig(id), { mode: 0o600 });
        w.terminalClusters.add(id);
        await registerCluster(
          w.fleet.table,
          { id, access: { kind: 'kubeconfig-file', path }, labels: { environment: 'soak-bad' } },
          new Date(),
        );
        w.fleet.bus.putEvents([
          {
            Source: RECONCILER_SOURCE,
            DetailType: RECONCILE_REQUEST_DETAIL_TYPE,
            EventBusName: w.fleet.eventBusName,
            Detail: JSON.stringify({ clusterId: id, nodePool: 'pool-00', reason: 'soak', requestedBy: 'soak' }),
          },
        ]);
        return;
      }
      w.violate('registration', `the registry accepted ${bad.why}`, { why: bad.why, id });
    },
  },
  'cluster-register-good': {
    weight: 1,
    async run(w) {
      // One more cluster, seeded, registered and forwarded while the fleet runs (at most one per soak).
      if (w.fleet.clusters.length > w.opts.clusters) throw new NothingToDo();
      await w.fleet.addCluster();
    },
  },
};

export async function runOperation(w: SoakWorld, kind: string): Promise<void> {
  const c = w.cluster();
  w.currentOp = kind;
  try {
    await OPERATIONS[kind].run(w, c);
    w.operations.add(kind);
  } catch (err) {
    if (err instanceof NothingToDo) w.operations.add(`${kind} (nothing to do)`);
    else w.operations.add(kind, false, err);
  }
}
