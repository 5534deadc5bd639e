import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { KUBECTL } from '../../../dev/local/kube-bins/index.ts';
import { EventValidationError } from '../../../events/index.ts';
import { type CloudEventResult, LEAVING_ANNOTATION } from '../../../functions/cloud-events/handler.ts';
import { parseCloudEvent, providerIdNames } from '../../../functions/cloud-events/parse.ts';
import { waitFor } from '../../support/local-cluster.ts';

const run = promisify(execFile);
const NS = 'pool-spirit-system';
const INSTANCES = { 'spot-a': 'i-0a1b2c3d4e5f60001', 'spot-b': 'i-0a1b2c3d4e5f60002' } as const;

/** EC2 events exactly as AWS sends them to the default bus. */
function stateChange(instanceId: string, state: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'EC2 Instance State-change Notification',
    source: 'aws.ec2',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'eu-west-1',
    resources: [`arn:aws:ec2:eu-west-1:123456789012:instance/${instanceId}`],
    detail: { 'instance-id': instanceId, state },
  };
}
function spotWarning(instanceId: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'EC2 Spot Instance Interruption Warning',
    source: 'aws.ec2',
    account: '123456789012',
    time: new Date().toISOString(),
    region: 'eu-west-1',
    resources: [`arn:aws:ec2:eu-west-1:123456789012:instance/${instanceId}`],
    detail: { 'instance-id': instanceId, 'instance-action': 'terminate' },
  };
}

describe('cloud events: parsing', () => {
  it('acts on leaving states and Spot warnings, ignores the rest', () => {
    expect(parseCloudEvent(stateChange('i-0123456789abcdef0', 'stopping'))).toMatchObject({
      instanceId: 'i-0123456789abcdef0',
      why: 'stopping',
    });
    expect(parseCloudEvent(stateChange('i-0123456789abcdef0', 'terminated'))).toMatchObject({ why: 'terminated' });
    expect(parseCloudEvent(spotWarning('i-0123456789abcdef0'))).toMatchObject({ why: 'spot-interruption' });
    expect(parseCloudEvent(stateChange('i-0123456789abcdef0', 'running'))).toBeUndefined();
  });

  it('names the bad field of a malformed event', () => {
    const bad = stateChange('vol-123', 'stopping');
    expect(() => parseCloudEvent(bad)).toThrow(EventValidationError);
    expect(() => parseCloudEvent(bad)).toThrow(/detail\.instance-id: expected an EC2 instance id/);
  });

  it('matches a providerID by its instance id only', () => {
    expect(providerIdNames('aws:///eu-west-1a/i-0a1b2c3d4e5f60001', 'i-0a1b2c3d4e5f60001')).toBe(true);
    expect(providerIdNames('aws:///eu-west-1a/i-0a1b2c3d4e5f600011', 'i-0a1b2c3d4e5f60001')).toBe(false);
    expect(providerIdNames(undefined, 'i-0a1b2c3d4e5f60001')).toBe(false);
  });
});

/**
 * The whole path in a fleet on the built control plane: an EC2 event injected into the bus is routed by serverless.yml's rules
 * to the cloud-events function, which finds the node by providerID in whichever registered cluster has it
 * and moves the pool-spirit to the pool's other Ready node; the reconcile it requests keeps the status true.
 */
describe('cloud events: a fleet with an EC2-backed edge pool on the built control plane', () => {
  let fleet: LocalFleet;
  let dir: string;
  const kubectl = async (...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', fleet.clusters[1].kubeconfigPath, ...args])).stdout;
  const spiritNode = async () =>
    JSON.parse(await kubectl('get', 'pods', '-n', NS, '-l', 'poolspirit.io/pool=spot', '-o', 'json'))
      .items.filter((p: any) => !p.metadata.deletionTimestamp)
      .map((p: any) => p.spec.nodeName as string | undefined);
  const available = async () =>
    (await kubectl(
      'get',
      'poolspirit',
      'spot',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Available")].status}',
    )) === 'True';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-cloud-events-'));
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 1,
      nodesPerPool: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      controlPlane: 'real',
    });
    const manifest = [
      'apiVersion: apps.openyurt.io/v1beta1',
      'kind: NodePool',
      'metadata: { name: spot }',
      'spec: { type: Edge }',
    ];
    for (const [name, id] of Object.entries(INSTANCES)) {
      manifest.push(
        '---',
        'apiVersion: v1',
        'kind: Node',
        `metadata: { name: ${name}, labels: { apps.openyurt.io/nodepool: spot } }`,
        `spec: { providerID: "aws:///eu-west-1a/${id}" }`,
      );
    }
    await writeFile(join(dir, 'spot.yaml'), `${manifest.join('\n')}\n`);
    await kubectl('apply', '-f', join(dir, 'spot.yaml'));
    const ready = JSON.stringify({
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: new Date().toISOString() },
        ],
      },
    });
    for (const name of Object.keys(INSTANCES))
      await kubectl('patch', 'node', name, '--subresource=status', '--type=merge', '-p', ready);
    await fleet.waitConverged(60_000);
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a Spot interruption warning moves the pool-spirit to the other node of its pool', async () => {
    const [from] = await spiritNode();
    const to = from === 'spot-a' ? 'spot-b' : 'spot-a';
    const reconcilesBefore = fleet.reconcile.stats.invocations;
    fleet.bus.injectEvent(spotWarning(INSTANCES[from as keyof typeof INSTANCES]));
    await waitFor(
      async () => {
        const nodes = await spiritNode();
        return nodes.length === 1 && nodes[0] === to;
      },
      30_000,
      `the pool-spirit pod on ${to}`,
    );
    await waitFor(available, 30_000, 'PoolSpirit spot Available again');
    const node = JSON.parse(await kubectl('get', 'node', from!, '-o', 'json'));
    expect(node.spec.unschedulable).toBe(true);
    expect(node.metadata.annotations[LEAVING_ANNOTATION]).toMatch(
      new RegExp(`^spot-interruption of ${INSTANCES[from as keyof typeof INSTANCES]} at `),
    );
    await fleet.bus.drain();
    expect(fleet.cloudEvents.stats).toMatchObject({ invocations: 1, errors: 0 });
    expect(fleet.reconcile.stats.invocations).toBeGreaterThan(reconcilesBefore);
    expect(fleet.bus.deadLetters()).toEqual([]);
    // The other cluster's nodes were searched and left alone.
    expect(
      await run(KUBECTL, [
        '--kubeconfig',
        fleet.clusters[0].kubeconfigPath,
        'get',
        'nodes',
        '-o',
        'jsonpath={.items[*].spec.unschedulable}',
      ]).then((r) => r.stdout.trim()),
    ).toBe('');
  }, 60_000);

  it('a repeated delivery finds nothing left to move', async () => {
    const [at] = await spiritNode();
    const gone = at === 'spot-a' ? 'spot-b' : 'spot-a';
    const result = (await fleet.cloudEvents.invoke(spotWarning(INSTANCES[gone]))) as CloudEventResult;
    expect(result).toMatchObject({
      result: 'handled',
      reconcileRequests: 0,
      matches: [{ clusterId: 'cluster-02', node: gone, cordoned: false, moves: [] }],
    });
    expect(await spiritNode()).toEqual([at]);
  }, 30_000);

  it('keeps the pod when its pool has no other Ready node, and still asks for a reconcile', async () => {
    const [at] = await spiritNode();
    const result = (await fleet.cloudEvents.invoke(
      stateChange(INSTANCES[at as keyof typeof INSTANCES], 'stopping'),
    )) as CloudEventResult;
    expect(result).toMatchObject({ result: 'handled', why: 'stopping', reconcileRequests: 1 });
    expect(result.matches[0].moves).toEqual([{ pool: 'spot', pod: expect.any(String), action: 'kept' }]);
    expect(await spiritNode()).toEqual([at]);
  }, 30_000);

  it('ignores instances no cluster has and states that are not leaving', async () => {
    expect(await fleet.cloudEvents.invoke(stateChange('i-0fffffffffffffff0', 'terminated'))).toMatchObject({
      result: 'no-node',
      matches: [],
    });
    expect(await fleet.cloudEvents.invoke(stateChange(INSTANCES['spot-a'], 'running'))).toMatchObject({
      result: 'ignored',
    });
  }, 30_000);
});
