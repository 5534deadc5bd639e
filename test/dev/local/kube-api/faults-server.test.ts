/** The fault injector as the local API applies it: failures, latency and dropped watches per verb/resource. */
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalCluster, startLocalCluster } from '../../../../dev/local/kube-api/index.ts';

let cluster: LocalCluster | undefined;
afterEach(async () => {
  await cluster?.stop();
  cluster = undefined;
});

const createConfigMap = (name: string) =>
  fetch(`${cluster!.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { name }, data: { a: 'b' } }),
  });

describe('fault injection in the local API', () => {
  it('answers matching requests with the configured status and leaves others alone', async () => {
    cluster = await startLocalCluster({
      faults: { seed: 1, rules: [{ verbs: ['create'], resources: ['configmaps'], errorRate: 1, errorStatus: 429 }] },
    });
    const failed = await createConfigMap('x');
    expect(failed.status).toBe(429);
    expect(((await failed.json()) as { kind: string }).kind).toBe('Status');
    const list = await fetch(`${cluster.url}/api/v1/namespaces/default/configmaps`);
    expect(list.status).toBe(200);
    const ns = await fetch(`${cluster.url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'unaffected' } }),
    });
    expect(ns.status).toBe(201);
  });

  it('drops watch connections after the configured time', async () => {
    cluster = await startLocalCluster({ faults: { rules: [{ resources: ['configmaps'], watchDropAfterMs: 150 }] } });
    const started = Date.now();
    const res = await fetch(`${cluster.url}/api/v1/namespaces/default/configmaps?watch=true`);
    expect(res.status).toBe(200);
    // A dropped connection: the stream ends, cleanly or with a reset, once the time is up.
    await res.text().catch(() => undefined);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('fails about errorRate of requests, reproducibly for a seed', async () => {
    const outcomes = async (seed: number) => {
      cluster = await startLocalCluster({
        faults: { seed, rules: [{ verbs: ['create'], resources: ['configmaps'], errorRate: 0.5 }] },
      });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) codes.push((await createConfigMap(`cm-${i}`)).status);
      await cluster.stop();
      cluster = undefined;
      return codes;
    };
    const first = await outcomes(11);
    expect(first.filter((c) => c === 500).length).toBeGreaterThan(3);
    expect(first.filter((c) => c === 201).length).toBeGreaterThan(3);
    expect(await outcomes(11)).toEqual(first);
  });
});
