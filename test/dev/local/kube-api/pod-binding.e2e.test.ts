/**
 * pods/binding on the local API against kube-apiserver v1.36.3: the same requests to both, the answers and
 * the bound pods compared. The real apiserver is a rendered pool-spirit's (kube-apiserver and etcd, no
 * scheduler), so nothing else binds the pods.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';
import { type RealApiserver, startRealApiserver } from '../../../support/real-apiserver.ts';

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };
type Call = (method: string, path: string, body?: unknown) => Promise<Answer>;

let real: RealApiserver;
let local: LocalCluster;
const servers: Record<'real' | 'local', Call> = {
  real: async (method, path, body) => {
    const r = await real.raw(method, path, body === undefined ? {} : { body: JSON.stringify(body) });
    return { status: r.status, body: JSON.parse(r.body) as Obj };
  },
  local: async (method, path, body) => {
    const r = await fetch(local.url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Obj };
  },
};

beforeAll(async () => {
  [real, local] = await Promise.all([startRealApiserver(), startLocalCluster()]);
  // The real apiserver's ServiceAccount admission wants the namespace's default account.
  const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } };
  await servers.real('POST', '/api/v1/namespaces/default/serviceaccounts', sa);
}, 120_000);
afterAll(async () => {
  await Promise.all([real?.stop(), local?.stop()]);
});

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, spec: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { a: '1' }, annotations: { x: 'y' } },
  spec: {
    schedulerName: 'none',
    automountServiceAccountToken: false,
    containers: [{ name: 'c', image: 'x:1' }],
    ...spec,
  },
});
const binding = (name: string, target: Obj, metadata: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name, ...metadata },
  target,
});
/** What may differ between two servers: generated names and times. */
const normalize = (text: string, pod: Obj) =>
  text.replaceAll(pod.metadata.uid, '<uid>').replace(/object meta: \d+/, 'object meta: <rv>');

/** Runs the same scenario on a server: what each step answered, and the bound pod. */
async function scenario(call: Call) {
  const created = await call('POST', PODS, pod('p1'));
  expect(created.status).toBe(201);
  const answers: Record<string, Answer> = {};
  const bind = (pod: string, b: Obj) => call('POST', `${PODS}/${pod}/binding`, b);
  answers.bound = await bind(
    'p1',
    binding('p1', { name: 'n1' }, { annotations: { bx: 'by' }, labels: { bl: 'v', a: '2' } }),
  );
  const bound = (await call('GET', `${PODS}/p1`)).body;
  answers.again = await bind('p1', binding('p1', { name: 'n2' }));
  answers.nameMismatch = await bind('p1', binding('other', { name: 'n2' }));
  answers.noPod = await bind('nope', binding('nope', { name: 'n2' }));
  const p2 = (await call('POST', PODS, pod('p2'))).body;
  answers.noTarget = await bind('p2', binding('p2', {}));
  answers.badKind = await bind('p2', binding('p2', { kind: 'Pod', name: 'n1' }));
  answers.badBoth = await bind('p2', binding('p2', { kind: 'Pod' }));
  answers.uidPrecondition = await bind('p2', binding('p2', { name: 'n1' }, { uid: 'not-the-pod' }));
  answers.rvPrecondition = await bind('p2', binding('p2', { name: 'n1' }, { resourceVersion: '1' }));
  answers.namespaceMismatch = await bind('p2', binding('p2', { name: 'n1' }, { namespace: 'other' }));
  answers.matchingPreconditions = await bind(
    'p2',
    binding('p2', { name: 'n3', kind: 'Node' }, { uid: p2.metadata.uid, resourceVersion: p2.metadata.resourceVersion }),
  );
  await call('POST', PODS, pod('p3', { schedulingGates: [{ name: 'wait' }] }));
  answers.gated = await bind('p3', binding('p3', { name: 'n1' }));
  const p2Bound = (await call('GET', `${PODS}/p2`)).body;
  for (const a of Object.values(answers)) a.body = JSON.parse(normalize(JSON.stringify(a.body), p2));
  const discovery = (await call('GET', '/api/v1')).body.resources.find((r: Obj) => r.name === 'pods/binding');
  return { answers, created: created.body, bound, p2Bound, discovery };
}

describe('pods/binding, local API against kube-apiserver', () => {
  let results: Record<'real' | 'local', Awaited<ReturnType<typeof scenario>>>;
  beforeAll(async () => {
    results = { real: await scenario(servers.real), local: await scenario(servers.local) };
  }, 60_000);

  it('answers every request as the real apiserver does (status, reason, message, details)', () => {
    expect(results.local.answers).toEqual(results.real.answers);
    // The scenario covers what a client can get wrong, not only the happy path.
    expect(Object.values(results.real.answers).map((a) => a.status)).toEqual([
      201, 409, 400, 404, 500, 500, 500, 409, 409, 400, 201, 409,
    ]);
  });

  it('binds as the real one: nodeName, merged and sorted annotations and labels, PodScheduled, no managedFields entry', () => {
    const view = (r: (typeof results)['real']) => ({
      nodeName: r.bound.spec.nodeName,
      annotations: Object.entries(r.bound.metadata.annotations),
      labels: Object.entries(r.bound.metadata.labels),
      conditions: r.bound.status.conditions.map((c: Obj) => ({
        ...c,
        lastTransitionTime: typeof c.lastTransitionTime,
      })),
      managers: r.bound.metadata.managedFields.map((m: Obj) => m.operation),
      resourceVersionMoved: r.bound.metadata.resourceVersion !== r.created.metadata.resourceVersion,
      p2: { nodeName: r.p2Bound.spec.nodeName, scheduled: r.p2Bound.status.conditions?.[0]?.status },
    });
    expect(view(results.local)).toEqual(view(results.real));
    expect(view(results.real)).toMatchObject({ nodeName: 'n1', p2: { nodeName: 'n3', scheduled: 'True' } });
    expect(results.local.bound.metadata.managedFields).toHaveLength(
      results.local.created.metadata.managedFields.length,
    );
  });

  it('is in discovery as the real one lists it', () => {
    expect(results.local.discovery).toEqual(results.real.discovery);
  });
});
