/**
 * Unconditional PUTs (no resourceVersion) that race each other, against kube-apiserver v1.36.3 and the local
 * API on etcd (where a write can interleave between the read and the compare-and-swap): kube retries each on
 * the fresh object with a new copy of the request's object, so every PUT succeeds. The local API reused the
 * object its first attempt had filled in, resourceVersion included, and answered the retry 409.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealApiserver, startRealApiserver } from '../../../support/real-apiserver.ts';
import { etcdBackend, startTestCluster, type TestCluster } from './server/harness.ts';

type Put = (path: string, body: unknown) => Promise<{ status: number; n?: string }>;
const PUTS = 20;
const PATH = '/api/v1/namespaces/default/configmaps';

let real: RealApiserver;
let local: TestCluster;
const servers: Record<'kube-apiserver' | 'local API', { put: Put; post: Put }> = {
  'kube-apiserver': {
    put: async (path, body) => answer(await real.raw('PUT', path, { body: JSON.stringify(body) })),
    post: async (path, body) => answer(await real.raw('POST', path, { body: JSON.stringify(body) })),
  },
  'local API': {
    put: async (path, body) => answerOf(await local.raw('PUT', path, body)),
    post: async (path, body) => answerOf(await local.raw('POST', path, body)),
  },
};
const answer = (r: { status: number; body: string }) => ({
  status: r.status,
  n: (JSON.parse(r.body) as { data?: { n?: string } }).data?.n,
});
const answerOf = (r: { status: number; json: { data?: { n?: string } } }) => ({ status: r.status, n: r.json.data?.n });

beforeAll(async () => {
  [real, local] = await Promise.all([startRealApiserver(), startTestCluster(etcdBackend)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([real?.stop(), local?.stop()]);
});

describe.each(['kube-apiserver', 'local API'] as const)('%s', (server) => {
  it(`answers ${PUTS} racing unconditional PUTs of one ConfigMap with 200 each`, async () => {
    const s = servers[server];
    expect((await s.post(PATH, { metadata: { name: 'race' }, data: { n: '0' } })).status).toBe(201);
    const puts = await Promise.all(
      Array.from({ length: PUTS }, (_, i) =>
        s.put(`${PATH}/race`, { metadata: { name: 'race' }, data: { n: `${i + 1}` } }),
      ),
    );
    expect(puts.map((p) => p.status)).toEqual(puts.map(() => 200));
    expect(new Set(puts.map((p) => p.n)).size).toBe(PUTS);
  });
});
