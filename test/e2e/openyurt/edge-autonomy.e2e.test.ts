/**
 * Edge autonomy end to end (issue 35, item 4), with OpenYurt v1.5.1's own parts: real YurtHubs electing in the
 * product's pool-spirit, yurt-manager v1.5.1 (delegatelease, podbinding) and the real kube-controller-manager
 * (node lifecycle, taint eviction) on the real local control plane. Two pools of two nodes; the story is told
 * on the first, the second stays connected throughout (the world is test/e2e/yurthub/world.ts). The second
 * pool is needed: with every Node of the cluster not Ready, kube-controller-manager assumes its own connectivity
 * is at fault ("master disruption mode", node_lifecycle_controller.go handleDisruption) and neither taints nor
 * evicts, so a cluster of one cut-off pool would show nothing about eviction.
 *
 * The host's node Leases are left to the hubs first (leaveNodeLeasesToHubs): the process kubelet would
 * otherwise renew them straight to the host apiserver, around every hub's host link, and no cut would ever
 * show on the host. The node's kubelet status post is played here as the kubelet does it on an edge node:
 * through its YurtHub, every 10 s, only when the Node it reads (through the hub) is not Ready.
 *
 * The story, one timeline (ms from the first cut), printed as one `autonomy-timeline` JSON line:
 *  1. A Running workload pod on the follower node, the node annotated apps.openyurt.io/binding=true:
 *     podbinding gives it the not-ready/unreachable NoExecute tolerations without a time limit.
 *  2. The follower's hub is cut off from the host for longer than kube-controller-manager's node-monitor grace
 *     period: it marks its Lease in the pool-spirit for delegation, the leader delegates it to the host, the
 *     Lease there keeps being renewed, the Node stays Ready, and after 4 delegated renewals delegatelease
 *     taints it node.openyurt.io/unschedulable.
 *  3. The leader is cut off too (the whole pool): nobody can delegate, both Nodes go Unknown, the node lifecycle
 *     controller taints them unreachable:NoExecute and the taint eviction controller evicts a control pod that
 *     asked for it, while the workload pod (podbinding's toleration) and the pool-spirit pod stay.
 *  4. The leader is back: it leads again and delegates the follower's Lease again; delegatelease tries to set
 *     the Unknown Node Ready and v1.5.1's chart RBAC (no nodes/status) refuses it.
 *  5. The follower is back: the delegation mark goes, the unschedulable taint goes, the Node is Ready again.
 * No pod of the pool is evicted at any point.
 */
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import type { RunningYurtHub } from '../../../dev/local/yurthub/hub.ts';
import { waitFor } from '../../support/wait.ts';
import {
  hostApi,
  leaderOf,
  leaveNodeLeasesToHubs,
  nodeLeaseIn,
  startYurtHubWorld,
  type YurtHubWorld,
} from '../yurthub/world.ts';
import type { Condition, LeaseJson, NodeJson, PodJson, Toleration } from './kube-json.ts';

/** kube-controller-manager v1.36.3's default --node-monitor-grace-period: dev/local/real-cluster/args.ts sets none. */
const NODE_MONITOR_GRACE_MS = 50_000;
/** Its default --node-monitor-period: how often the node lifecycle controller looks. */
const NODE_MONITOR_PERIOD_MS = 5_000;
/** The kubelet's nodeStatusUpdateFrequency. */
const KUBELET_STATUS_PERIOD_MS = 10_000;

const MARK = 'openyurt.io/delegate-heartbeat';
const BINDING = 'apps.openyurt.io/binding';
const UNSCHEDULABLE = 'node.openyurt.io/unschedulable';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
const NOT_READY = 'node.kubernetes.io/not-ready';
const KUBELET_UA = 'kubelet/v1.28.9 (linux/amd64) kubernetes/edge-autonomy-e2e';
const WORKLOAD = { namespace: 'default', name: 'edge-workload' };
const CONTROL = { namespace: 'default', name: 'edge-control' };

/** One distinct renewTime of a node's Lease on the host, as first seen. */
interface Renewal {
  renewTime: string;
  /** renewTime, ms from the first cut. */
  renewMs: number;
  /** When this test first saw it, ms from the first cut. */
  seenMs: number;
  delegated: boolean;
}

const readyOf = (n: NodeJson | undefined): Condition | undefined =>
  n?.status?.conditions?.find((c) => c.type === 'Ready');
const hasTaint = (n: NodeJson | undefined, key: string, effect: string): boolean =>
  (n?.spec?.taints ?? []).some((t) => t.key === key && t.effect === effect);
const noExecute = (ts: Toleration[] | undefined, key: string): Toleration | undefined =>
  (ts ?? []).find((t) => t.key === key && t.operator === 'Exists' && t.effect === 'NoExecute');

async function getOrUndefined<T>(host: RawObjectApi, path: string): Promise<T | undefined> {
  try {
    return await host.requestJson<T>(HttpMethod.GET, path);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

const podPath = (p: { namespace: string; name: string }) => `/api/v1/namespaces/${p.namespace}/pods/${p.name}`;
const leasePath = (node: string) => `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`;

/**
 * The node's kubelet keeping its Node status, as on an OpenYurt edge node: every nodeStatusUpdateFrequency it
 * lists its Node through its YurtHub and, when that Node is not Ready (the node lifecycle controller marked it
 * Unknown), posts Ready=True through the hub, which forwards it with the node's identity while the host is
 * reachable and answers from its cache while it is not. The process kubelet of this world never posts a Ready
 * status again once the controller-manager changed it (node-heartbeats.ts), so without this a node that went
 * Unknown stays Unknown after its link is back.
 */
function kubeletStatusThroughHub(hub: RunningYurtHub): { posts: Array<{ at: number; status: number }>; stop(): void } {
  const posts: Array<{ at: number; status: number }> = [];
  const nodes = `http://127.0.0.1:${hub.ports.proxy}/api/v1/nodes`;
  let busy = false;
  const beat = async () => {
    if (busy) return;
    busy = true;
    try {
      // Its view of its Node, as the kubelet's node informer lists it (a plain GET of the node by the kubelet goes
      // to YurtHub v1.5.1's autonomy proxy, which reads the hub's cache and, with nothing cached and the host away,
      // builds a client from a nil config).
      const res = await fetch(`${nodes}?fieldSelector=${encodeURIComponent(`metadata.name=${hub.node}`)}`, {
        headers: { 'user-agent': KUBELET_UA },
        signal: AbortSignal.timeout(5000),
      });
      if (!res.ok) {
        await res.arrayBuffer();
        return;
      }
      const node = ((await res.json()) as { items?: NodeJson[] }).items?.[0];
      if (!node || readyOf(node)?.status === 'True') return;
      const now = new Date().toISOString();
      const patch = await fetch(`${nodes}/${hub.node}/status`, {
        method: 'PATCH',
        headers: { 'user-agent': KUBELET_UA, 'content-type': 'application/strategic-merge-patch+json' },
        body: JSON.stringify({
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'kubelet is posting ready status',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
          },
        }),
        signal: AbortSignal.timeout(5000),
      });
      await patch.arrayBuffer();
      posts.push({ at: Date.now(), status: patch.status });
    } catch {
      // The hub restarting or busy: the next period tries again, as the kubelet does.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void beat(), KUBELET_STATUS_PERIOD_MS);
  return { posts, stop: () => clearInterval(timer) };
}

describe('edge autonomy with real YurtHubs, yurt-manager v1.5.1 and the pool-spirit (2 pools × 2 nodes)', () => {
  let world: YurtHubWorld;
  let host: RawObjectApi;
  let pool: string;
  let leader: RunningYurtHub;
  let follower: RunningYurtHub;
  let spiritPod: { namespace: string; name: string; uid: string; node: string; apiServerPid: number };
  let workloadUid: string;
  const kubelets: Array<ReturnType<typeof kubeletStatusThroughHub>> = [];
  /** ms since the epoch of the first cut; every time in the timeline is relative to it. */
  let t0 = 0;
  const since = (at: number) => at - t0;
  const events: Record<string, number> = {};
  const mark = (name: string, at = Date.now()) => {
    events[name] ??= since(at);
  };
  const renewals: Record<string, Renewal[]> = {};
  const readyHistory: Record<string, Array<{ atMs: number; status: string; reason?: string }>> = {};
  const violations: string[] = [];
  const timeline: Record<string, unknown> = {};

  /** Everything the story is judged on, read once: Leases, Nodes, the pods, the follower's pool-spirit Lease. */
  async function observe(): Promise<{ lease: Record<string, LeaseJson>; node: Record<string, NodeJson> }> {
    const at = Date.now();
    const lease: Record<string, LeaseJson> = {};
    const node: Record<string, NodeJson> = {};
    for (const hub of [leader, follower]) {
      const l = await host.requestJson<LeaseJson>(HttpMethod.GET, leasePath(hub.node));
      lease[hub.node] = l;
      renewals[hub.node] ??= [];
      const list = renewals[hub.node];
      const renewTime = l.spec?.renewTime ?? '';
      if (list.at(-1)?.renewTime !== renewTime) {
        list.push({
          renewTime,
          renewMs: since(Date.parse(renewTime)),
          seenMs: since(at),
          delegated: l.metadata.annotations?.[MARK] === 'true',
        });
      }
      const n = await host.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${hub.node}`);
      node[hub.node] = n;
      const ready = readyOf(n);
      readyHistory[hub.node] ??= [];
      const history = readyHistory[hub.node];
      if (ready && (history.at(-1)?.status !== ready.status || history.at(-1)?.reason !== ready.reason))
        history.push({ atMs: since(at), status: ready.status, ...(ready.reason ? { reason: ready.reason } : {}) });
      for (const [key, effect] of [
        [UNSCHEDULABLE, 'NoSchedule'],
        [UNREACHABLE, 'NoExecute'],
      ] as const)
        if (hasTaint(n, key, effect)) mark(`${hub.node} ${key}:${effect}`, at);
    }
    const inPoolSpirit = (await nodeLeaseIn(world, pool, follower.node)).body as LeaseJson;
    if (inPoolSpirit.metadata?.annotations?.[MARK] === 'true') mark(`${follower.node} marked in the pool-spirit`, at);
    if (lease[follower.node]!.metadata.annotations?.[MARK] === 'true')
      mark(`${follower.node} delegated to the host`, at);
    // The pods of the pool: never gone, never replaced, never being deleted.
    for (const [what, path, uid] of [
      ['workload pod', podPath(WORKLOAD), workloadUid],
      ['pool-spirit pod', podPath(spiritPod), spiritPod.uid],
    ] as const) {
      const pod = await getOrUndefined<PodJson>(host, path);
      if (!pod) violations.push(`${since(at)} ms: ${what} gone`);
      else if (pod.metadata.uid !== uid) violations.push(`${since(at)} ms: ${what} replaced (uid ${pod.metadata.uid})`);
      else if (pod.metadata.deletionTimestamp)
        violations.push(`${since(at)} ms: ${what} being deleted since ${pod.metadata.deletionTimestamp}`);
    }
    const control = await getOrUndefined<PodJson>(host, podPath(CONTROL));
    if (!control || control.metadata.deletionTimestamp) mark('control pod evicted', at);
    return { lease, node };
  }

  /** The longest the node's host Lease went without a renewal in [fromMs, toMs] (ms from the first cut). */
  function longestRenewGap(node: string, fromMs: number, toMs: number): number {
    const list = renewals[node] ?? [];
    const before = list.filter((r) => r.renewMs <= fromMs).at(-1);
    const inside = list.filter((r) => r.renewMs > fromMs && r.renewMs <= toMs);
    const times = [...(before ? [before.renewMs] : [fromMs]), ...inside.map((r) => r.renewMs), toMs];
    let gap = 0;
    for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i]! - times[i - 1]!);
    return gap;
  }

  const nodesStatusRefusals = async (node: string) =>
    (await world.fleet.clusters[0]!.yurtManager!.errorLines()).filter(
      (l) => l.includes(`Error updating node ${node}`) && l.includes('nodes/status'),
    );

  beforeAll(async () => {
    world = await startYurtHubWorld({ pools: 2, hubsPerPool: 2 });
    host = await hostApi(world);
    pool = world.pools[0]!;
    await world.hubs.waitElected(60_000);
    const { holder } = await leaderOf(world, pool);
    const hubs = world.hubs.byPool(pool);
    leader = hubs.find((h) => h.node === holder)!;
    follower = hubs.find((h) => h.node !== holder)!;
    expect(leader).toBeDefined();
    expect(follower).toBeDefined();
    // From here only the hubs renew the host's node Leases, each through its own host link.
    const handedOverAt = Date.now();
    leaveNodeLeasesToHubs(world);
    await waitFor(
      async () => {
        for (const hub of hubs) {
          const l = await host.requestJson<LeaseJson>(HttpMethod.GET, leasePath(hub.node));
          // A renewal the process kubelet had in flight lands within a second of the handover.
          if (!(Date.parse(l.spec?.renewTime ?? '') > handedOverAt + 1000)) return false;
        }
        return true;
      },
      30_000,
      'each hub to renew its node Lease on the host',
      500,
    );
    timeline.hubsRenewHostLeasesAfterHandoverMs = Date.now() - handedOverAt;
    for (const hub of hubs) kubelets.push(kubeletStatusThroughHub(hub));
    const running = world.hubs.spiritOf(pool);
    const [ns, name] = running.podKey.split('/') as [string, string];
    const pod = await host.requestJson<PodJson>(HttpMethod.GET, podPath({ namespace: ns, name }));
    spiritPod = {
      namespace: ns,
      name,
      uid: pod.metadata.uid!,
      node: pod.spec.nodeName!,
      apiServerPid: running.apiServer.pid,
    };
    timeline.poolSpiritPod = { pod: running.podKey, node: spiritPod.node, tolerationsAtStart: pod.spec.tolerations };
  }, 300_000);

  afterAll(async () => {
    for (const k of kubelets) k.stop();
    if (world) {
      for (const hub of world.hubs.hubs) world.hubs.hostLinkOf(hub.node).restore();
      timeline.events = events;
      timeline.hostLeaseRenewals = renewals;
      timeline.readyHistory = readyHistory;
      timeline.kubeletStatusPosts = Object.fromEntries(
        kubelets.map((k, i) => [world.hubs.byPool(pool)[i]!.node, k.posts.map((p) => [since(p.at), p.status])]),
      );
      timeline.violations = violations;
      console.log(JSON.stringify({ 'autonomy-timeline': timeline }));
      await world.stop();
    }
  }, 120_000);

  it('podbinding: a Running pod on a node annotated apps.openyurt.io/binding=true tolerates not-ready and unreachable without a time limit', async () => {
    const create = (p: { namespace: string; name: string }, tolerations: Toleration[]) =>
      waitFor(
        () =>
          host.requestJson<PodJson>(HttpMethod.POST, `/api/v1/namespaces/${p.namespace}/pods`, {
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: p.name, namespace: p.namespace },
              spec: {
                nodeName: follower.node,
                automountServiceAccountToken: false,
                containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
                tolerations,
              },
            },
          }),
        30_000,
        `pod ${p.name} created on ${follower.node}`,
        500,
      );
    workloadUid = (await create(WORKLOAD, [])).metadata.uid!;
    // The control: a pod that asks to be evicted 1 s after its node becomes unreachable. Its toleration is
    // `Equal`, which podbinding's `Exists` ones do not replace, and the taint eviction controller takes the
    // shortest matching toleration: it shows eviction is live on this node while the workload pod stays.
    await create(CONTROL, [
      { key: UNREACHABLE, operator: 'Equal', value: '', effect: 'NoExecute', tolerationSeconds: 1 },
    ]);
    // Running, as the node's kubelet reports it (the process kubelet of this world).
    for (const p of [WORKLOAD, CONTROL])
      await waitFor(
        async () => (await host.requestJson<PodJson>(HttpMethod.GET, podPath(p))).status?.phase === 'Running',
        30_000,
        `${p.name} Running`,
        250,
      );
    const before = (await host.requestJson<PodJson>(HttpMethod.GET, podPath(WORKLOAD))).spec.tolerations;
    // The apiserver's DefaultTolerationSeconds admission gave it 300 s.
    expect(noExecute(before, UNREACHABLE)?.tolerationSeconds).toBe(300);
    const annotatedAt = Date.now();
    // podbinding acts on Node events and reads pods from its cache: each poll touches the node, so a cache
    // that had not seen the pod Running yet gets another event.
    const tolerations = await waitFor(
      async () => {
        await host.requestJson(HttpMethod.PATCH, `/api/v1/nodes/${follower.node}`, {
          body: { metadata: { annotations: { [BINDING]: 'true', 'e2e.test/touched': String(Date.now()) } } },
          contentType: 'application/merge-patch+json',
        });
        const ts = (await host.requestJson<PodJson>(HttpMethod.GET, podPath(WORKLOAD))).spec.tolerations;
        const nr = noExecute(ts, NOT_READY);
        const un = noExecute(ts, UNREACHABLE);
        return nr && un && nr.tolerationSeconds === undefined && un.tolerationSeconds === undefined ? ts : undefined;
      },
      30_000,
      `podbinding to drop the time limit of ${WORKLOAD.name}'s tolerations`,
      500,
    );
    const control = (await host.requestJson<PodJson>(HttpMethod.GET, podPath(CONTROL))).spec.tolerations;
    // podbinding added its own unlimited ones to the control pod and left its 1 s one.
    expect((control ?? []).find((t) => t.key === UNREACHABLE && t.operator === 'Equal')?.tolerationSeconds).toBe(1);
    const spirit = await host.requestJson<PodJson>(HttpMethod.GET, podPath(spiritPod));
    timeline.podbinding = {
      node: follower.node,
      toleratesWithoutLimitAfterMs: Date.now() - annotatedAt,
      workloadNoExecuteTolerations: tolerations.filter((t) => t.effect === 'NoExecute'),
      controlNoExecuteTolerations: (control ?? []).filter((t) => t.effect === 'NoExecute'),
      // The product renders 120 s (core/render/workload.ts LOST_NODE_TOLERATION_SECONDS); podbinding rewrites
      // every Running pod's not-ready/unreachable tolerations on each Node event of its node.
      poolSpiritNoExecuteTolerations: (spirit.spec.tolerations ?? []).filter((t) => t.effect === 'NoExecute'),
    };
  }, 90_000);

  it('follower cut off from the host past the node-monitor grace period: delegated through the pool-spirit, tainted unschedulable after 4 delegated renewals, Ready kept, nothing evicted', async () => {
    t0 = Date.now();
    world.hubs.hostLinkOf(follower.node).cut();
    // The first look, right after the cut, still finds the host Lease as the hub last renewed it (renewMs < 0).
    await observe();
    timeline.followerCut = { atMs: 0, node: follower.node, leader: leader.node };
    await waitFor(
      async () => {
        const { node } = await observe();
        const delegated = (renewals[follower.node] ?? []).filter((r) => r.delegated).length;
        // Time must pass here: the point is that the Node is still Ready after the controller-manager's grace
        // period (plus one monitor period and a margin), not only that the taint came.
        return (
          hasTaint(node[follower.node], UNSCHEDULABLE, 'NoSchedule') &&
          delegated >= 4 &&
          Date.now() - t0 >= NODE_MONITOR_GRACE_MS + NODE_MONITOR_PERIOD_MS + 5_000
        );
      },
      150_000,
      `${follower.node} delegated and tainted ${UNSCHEDULABLE} past the grace period`,
      1000,
    );
    const endMs = since(Date.now());
    const taintMs = events[`${follower.node} ${UNSCHEDULABLE}:NoSchedule`]!;
    const delegatedRenewals = (renewals[follower.node] ?? []).filter((r) => r.delegated);
    const longestGapMs = longestRenewGap(follower.node, 0, endMs);
    const readyDuringCut = (readyHistory[follower.node] ?? []).filter((h) => h.atMs >= 0);
    Object.assign(timeline.followerCut as object, {
      markedInPoolSpiritMs: events[`${follower.node} marked in the pool-spirit`],
      delegatedToHostMs: events[`${follower.node} delegated to the host`],
      delegatedRenewTimesMs: delegatedRenewals.map((r) => r.renewMs),
      unschedulableTaintMs: taintMs,
      delegatedRenewalsBeforeTaint: delegatedRenewals.filter((r) => r.renewMs <= taintMs).length,
      longestHostLeaseRenewGapMs: longestGapMs,
      nodeMonitorGracePeriodMs: NODE_MONITOR_GRACE_MS,
      observedUntilMs: endMs,
    });
    expect(events[`${follower.node} marked in the pool-spirit`]).toBeDefined();
    expect(events[`${follower.node} delegated to the host`]).toBeDefined();
    // delegatelease counts delegated Lease events and taints at the 4th: at least 4 delegated renewTimes precede
    // the first look that found the taint (a renewTime is written before its delegation, which precedes the taint).
    expect(delegatedRenewals.filter((r) => r.renewMs <= taintMs).length).toBeGreaterThanOrEqual(4);
    // The leader's delegation kept the host Lease fresh: never older than the grace period.
    expect(longestGapMs).toBeLessThan(NODE_MONITOR_GRACE_MS);
    // One Ready=True from the first look on, never another status.
    expect(readyDuringCut.map((h) => h.status)).toEqual(['True']);
    expect(readyOf((await observe()).node[follower.node])?.status).toBe('True');
    // Ready never went Unknown, so delegatelease never had a Ready to set.
    expect(await nodesStatusRefusals(follower.node)).toEqual([]);
    // No NoExecute taint while delegated: even the pod that asked for a 1 s eviction is still there.
    expect(events['control pod evicted']).toBeUndefined();
    expect(violations).toEqual([]);
  }, 200_000);

  it('leader cut off too (the whole pool): no delegation, both Nodes Unknown and unreachable:NoExecute, the control pod evicted, the workload and pool-spirit pods kept', async () => {
    const t1 = Date.now();
    world.hubs.hostLinkOf(leader.node).cut();
    await waitFor(
      async () => {
        const n = (await observe()).node;
        return (
          readyOf(n[follower.node])?.status === 'Unknown' &&
          readyOf(n[leader.node])?.status === 'Unknown' &&
          hasTaint(n[follower.node], UNREACHABLE, 'NoExecute') &&
          events['control pod evicted'] !== undefined
        );
      },
      150_000,
      'both nodes Unknown, the follower tainted unreachable:NoExecute and the control pod evicted',
      1000,
    );
    const unknownAt = (n: string) => readyHistory[n]!.find((h) => h.status === 'Unknown' && h.atMs >= since(t1))?.atMs;
    const workload = await host.requestJson<PodJson>(HttpMethod.GET, podPath(WORKLOAD));
    timeline.poolCut = {
      atMs: since(t1),
      followerUnknownMs: unknownAt(follower.node),
      leaderUnknownMs: unknownAt(leader.node),
      followerUnreachableNoExecuteMs: events[`${follower.node} ${UNREACHABLE}:NoExecute`],
      // The controller-manager taints one node per 10 s (--node-eviction-rate 0.1): the leader's may come later.
      leaderUnreachableNoExecuteMs: events[`${leader.node} ${UNREACHABLE}:NoExecute`],
      controlPodEvictedMs: events['control pod evicted'],
      followerLastHostRenewalMs: renewals[follower.node]!.at(-1)!.renewMs,
      leaderLastHostRenewalMs: renewals[leader.node]!.at(-1)!.renewMs,
    };
    // Nothing renewed the follower's Lease after the second cut, for longer than the grace period.
    expect(longestRenewGap(follower.node, since(t1), since(Date.now()))).toBeGreaterThanOrEqual(NODE_MONITOR_GRACE_MS);
    // The other pool, still connected, kept its Nodes Ready: the controller-manager was not in master disruption.
    for (const other of world.hubs.hubs.filter((h) => h.pool !== pool)) {
      const n = await host.requestJson<NodeJson>(HttpMethod.GET, `/api/v1/nodes/${other.node}`);
      expect(readyOf(n)?.status, other.node).toBe('True');
    }
    // The workload pod stayed under the same NoExecute taint that evicted the control pod: podbinding's toleration.
    expect(noExecute(workload.spec.tolerations, UNREACHABLE)).toEqual({
      key: UNREACHABLE,
      operator: 'Exists',
      effect: 'NoExecute',
    });
    expect(violations).toEqual([]);
  }, 200_000);

  it('leader back: it leads again and delegates the follower once more; delegatelease tries to set the Unknown Node Ready and v1.5.1 refuses it (no nodes/status)', async () => {
    const t2 = Date.now();
    const refusedBefore = (await nodesStatusRefusals(follower.node)).length;
    world.hubs.hostLinkOf(leader.node).restore();
    let refusal: string | undefined;
    await waitFor(
      async () => {
        const { node } = await observe();
        const refusals = await nodesStatusRefusals(follower.node);
        if (refusals.length > refusedBefore) {
          refusal ??= refusals[refusedBefore];
          mark('nodes/status refused for the follower');
        }
        if ((await leaderOf(world, pool)).holder === leader.node && (await leader.role()) === 'leader')
          mark('leader leads again');
        if (readyOf(node[leader.node])?.status === 'True') mark('leader Ready again');
        return (
          refusal !== undefined &&
          readyOf(node[leader.node])?.status === 'True' &&
          events['leader leads again'] !== undefined
        );
      },
      150_000,
      `${leader.node} Ready and leading again, and delegatelease refused nodes/status for ${follower.node}`,
      1000,
    );
    const delegatedAgain = renewals[follower.node]!.find((r) => r.delegated && r.seenMs >= since(t2));
    timeline.leaderBack = {
      atMs: since(t2),
      leadsAgainMs: events['leader leads again'],
      leaderReadyAgainMs: events['leader Ready again'],
      followerDelegatedAgainMs: delegatedAgain?.seenMs,
      nodesStatusRefusedMs: events['nodes/status refused for the follower'],
      refusal: refusal?.replace(/^\S+ \S+\s+\d+ /, ''),
    };
    expect(delegatedAgain).toBeDefined();
    expect(refusal).toContain(
      'User "system:serviceaccount:kube-system:yurt-manager-delegate-lease-controller" cannot update resource "nodes/status"',
    );
    // So the follower stays Unknown (and unreachable:NoExecute) while its heartbeat is delegated: on v1.5.1 only
    // podbinding's toleration keeps its pods.
    const { node } = await waitFor(() => observe(), 10_000, 'one more look', 1000);
    expect(readyOf(node[follower.node])?.status).toBe('Unknown');
    expect(hasTaint(node[follower.node], UNREACHABLE, 'NoExecute')).toBe(true);
    expect(violations).toEqual([]);
  }, 200_000);

  it('follower back: the delegation mark and the unschedulable taint go, the Node is Ready again, and no pod of the pool was evicted', async () => {
    const t3 = Date.now();
    world.hubs.hostLinkOf(follower.node).restore();
    await waitFor(
      async () => {
        const { lease, node } = await observe();
        const n = node[follower.node];
        if (lease[follower.node]!.metadata.annotations?.[MARK] === undefined) mark('follower host mark gone');
        if (!hasTaint(n, UNSCHEDULABLE, 'NoSchedule')) mark('follower unschedulable taint gone');
        if (readyOf(n)?.status === 'True') mark('follower Ready again');
        if (!hasTaint(n, UNREACHABLE, 'NoExecute')) mark('follower unreachable taint gone');
        return (
          lease[follower.node]!.metadata.annotations?.[MARK] === undefined &&
          !hasTaint(n, UNSCHEDULABLE, 'NoSchedule') &&
          readyOf(n)?.status === 'True' &&
          !hasTaint(n, UNREACHABLE, 'NoExecute') &&
          readyOf(node[leader.node])?.status === 'True'
        );
      },
      150_000,
      `${follower.node} undelegated, untainted and Ready`,
      1000,
    );
    const spiritNow = world.hubs.spiritOf(pool);
    const workload = await host.requestJson<PodJson>(HttpMethod.GET, podPath(WORKLOAD));
    const spirit = await host.requestJson<PodJson>(HttpMethod.GET, podPath(spiritPod));
    timeline.followerBack = {
      atMs: since(t3),
      hostMarkGoneMs: events['follower host mark gone'],
      unschedulableTaintGoneMs: events['follower unschedulable taint gone'],
      readyAgainMs: events['follower Ready again'],
      unreachableTaintGoneMs: events['follower unreachable taint gone'],
    };
    timeline.pods = {
      workload: { uid: workload.metadata.uid, deletionTimestamp: workload.metadata.deletionTimestamp ?? null },
      poolSpirit: {
        pod: `${spiritPod.namespace}/${spiritPod.name}`,
        node: spiritPod.node,
        uid: spirit.metadata.uid,
        deletionTimestamp: spirit.metadata.deletionTimestamp ?? null,
        apiServerPidKept: spiritNow.apiServer.pid === spiritPod.apiServerPid,
        noExecuteTolerationsAtEnd: (spirit.spec.tolerations ?? []).filter((t) => t.effect === 'NoExecute'),
      },
    };
    expect(workload.metadata.uid).toBe(workloadUid);
    expect(workload.metadata.deletionTimestamp).toBeUndefined();
    expect(spirit.metadata.uid).toBe(spiritPod.uid);
    expect(spirit.metadata.deletionTimestamp).toBeUndefined();
    expect(spiritNow.podKey).toBe(`${spiritPod.namespace}/${spiritPod.name}`);
    expect(spiritNow.apiServer.pid).toBe(spiritPod.apiServerPid);
    expect(violations).toEqual([]);
  }, 200_000);
});
