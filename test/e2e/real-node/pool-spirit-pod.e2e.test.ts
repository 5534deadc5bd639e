/**
 * The pool-spirit pod the reconciler renders, unchanged, on a real node: `local up --control-plane real
 * --kubelet real` as startLocalFleet (the reconcile function from the bus, the real control plane, the
 * product installed from infra/cluster), with the pool's node a built kubelet 1.36 on Debian's containerd and
 * runc (dev/local/kubelet/real). The images are the project's own (`npm run images`), imported into the
 * node's containerd. What the kubelet and runc did is read from the machine: /proc of each container's
 * process, its mountinfo, its cgroup; the bootstrap from the pool-spirit's own apiserver.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HttpMethod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { attachToPoolSpiritPod } from '../../../dev/local/capacity/real-node-target.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import { KUBECTL } from '../../../dev/local/kube-bins/index.ts';
import type { NodeContainer } from '../../../dev/local/kubelet/real/ctr.ts';
import { defaultNodeImages, requireLocalImage } from '../../../dev/local/kubelet/real/node-images.ts';
import { realNodeSkipReason } from '../../../dev/local/kubelet/real/prerequisites.ts';
import type { RealNode } from '../../../dev/local/kubelet/real/real-node.ts';
import { DEFAULT_CAPACITY_OPTIONS, runCapacityProbe } from '../../../probe/capacity/index.ts';
import { waitFor } from '../../support/wait.ts';

type Obj = Record<string, any>;
const run = promisify(execFile);

function imagesMissing(): string | undefined {
  try {
    for (const name of defaultNodeImages()) requireLocalImage(name);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
// Only a machine that cannot run a node at all (not root) skips; as root (CI) a missing package, kubelet or image
// fails the suite with what to install, rather than passing without a node.
const skipReason = process.getuid?.() === 0 ? undefined : realNodeSkipReason();
if (skipReason) console.warn(`real-node e2e skipped: ${skipReason}`);
const missing = skipReason ? undefined : (realNodeSkipReason() ?? imagesMissing());

/** `/proc/<pid>/status` fields. */
function procStatus(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  );
}

/** The mount at `point` as the process sees it: its fs type, mount options and super options. */
function mountOf(pid: number, point: string): { fstype: string; options: string[]; superOptions: string[] } {
  for (const line of readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    const fields = left?.split(' ') ?? [];
    if (fields[4] !== point || !right) continue;
    const [fstype, , superOptions] = right.split(' ');
    return { fstype: fstype!, options: fields[5]!.split(','), superOptions: (superOptions ?? '').split(',') };
  }
  throw new Error(`no mount at ${point} in /proc/${pid}/mountinfo`);
}

/** The cgroup v1 memory limit of a process's own cgroup (the container's, under the pod's). */
function memoryLimitOf(pid: number): { path: string; bytes: number } {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('memory'));
  const path = line!.split(':')[2]!;
  return { path, bytes: Number(readFileSync(`/sys/fs/cgroup/memory${path}/memory.limit_in_bytes`, 'utf8')) };
}

describe.skipIf(skipReason !== undefined)(
  'the rendered pool-spirit pod on a real node (kubelet + containerd + runc)',
  () => {
    let fleet: LocalFleet;
    let dir: string;
    let node: RealNode;
    let pod: Obj;
    const byName = new Map<string, NodeContainer>();

    beforeAll(async () => {
      if (missing) throw new Error(`a real node cannot run on this machine: ${missing}`);
      dir = await mkdtemp(join(tmpdir(), 'ps-real-node-'));
      fleet = await startLocalFleet({
        clusters: 1,
        pools: 1,
        nodesPerPool: 1,
        cloudPools: 0,
        stateDir: dir,
        retryBaseDelayMs: 20,
        kubelet: 'real',
        controlPlane: 'real',
      });
      await fleet.waitConverged(90_000);
      const [c] = fleet.clusters;
      node = c!.realNodes![0]!;
      const host = RawObjectApi.fromKubeConfig(c!.kubeConfig);
      const pods = await host.requestJson<{ items: Obj[] }>(
        HttpMethod.GET,
        `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods?labelSelector=app.kubernetes.io%2Fname%3Dpool-spirit`,
      );
      pod = pods.items.find((p) => p.spec.nodeName === node.name)!;
      for (const ct of await node.containers())
        if (ct.labels['io.kubernetes.pod.uid'] === pod.metadata.uid && ct.labels['io.kubernetes.container.name'])
          byName.set(ct.labels['io.kubernetes.container.name'], ct);
    }, 150_000);
    afterAll(async () => {
      await fleet?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('is Ready by the kubelet of a registered node, its probes and containers as rendered', async () => {
      const host = RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig);
      const n = await host.requestJson<Obj>(HttpMethod.GET, `/api/v1/nodes/${node.name}`);
      expect(n.status.nodeInfo.kubeletVersion).toBe('v1.36.3');
      expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/1\./);
      expect(n.metadata.labels['apps.openyurt.io/nodepool']).toBe(node.pool);
      expect(pod.status.conditions.find((x: Obj) => x.type === 'Ready').status).toBe('True');
      // Started and ready as the kubelet's startup and readiness probes said: the rendered probes are there.
      const apiServer = pod.spec.containers.find((x: Obj) => x.name === 'kube-apiserver');
      expect(apiServer.readinessProbe.httpGet.path).toBe('/readyz');
      for (const s of pod.status.containerStatuses) {
        expect(s, s.name).toMatchObject({ ready: true, started: true, restartCount: 0 });
        expect(s.containerID).toMatch(/^containerd:\/\//);
      }
      expect([...byName.keys()].sort()).toEqual(['agent', 'etcd', 'kube-apiserver']);
    });

    it('runs every container as uid 65532 with no capabilities, no new privileges and a read-only root', () => {
      for (const [name, ct] of byName) {
        const status = procStatus(ct.pid!);
        expect(status.Uid!.split(/\s+/), name).toEqual(['65532', '65532', '65532', '65532']);
        expect(status.CapEff, name).toBe('0000000000000000');
        expect(status.CapBnd, name).toBe('0000000000000000');
        expect(status.NoNewPrivs, name).toBe('1');
        expect(mountOf(ct.pid!, '/').options, name).toContain('ro');
        expect(ct.spec.root?.readonly, name).toBe(true);
      }
    });

    it("keeps etcd's data dir on the memory emptyDir: a tmpfs of the sizeLimit", () => {
      const etcd = byName.get('etcd')!;
      const volume = mountOf(etcd.pid!, '/var/lib/etcd');
      expect(volume.fstype).toBe('tmpfs');
      expect(volume.superOptions).toContain('size=1048576k');
      const args: string[] = pod.spec.containers.find((x: Obj) => x.name === 'etcd').args;
      expect(args).toContain('--data-dir=/var/lib/etcd/data');
    });

    it('puts each container under its memory limit in the pod cgroup', () => {
      const want: Record<string, number> = { 'kube-apiserver': 2 ** 30, etcd: 2 * 2 ** 30, agent: 128 * 2 ** 20 };
      for (const [name, ct] of byName) {
        const { path, bytes } = memoryLimitOf(ct.pid!);
        expect(path, name).toContain(`${node.cgroupRoot}/kubepods/burstable/pod${pod.metadata.uid}/`);
        expect(bytes, name).toBe(want[name]);
      }
    });

    it("has the agent's bootstrap in the pool-spirit's own apiserver, read from inside the pod", async () => {
      const host = RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig);
      const secretName = pod.spec.volumes.find((v: Obj) => v.name === 'agent-kubeconfig').secret.secretName;
      const secret = await host.requestJson<Obj>(
        HttpMethod.GET,
        `/api/v1/namespaces/${PRODUCT_NAMESPACE}/secrets/${secretName}`,
      );
      const kubeconfig = join(dir, 'agent.kubeconfig');
      await writeFile(kubeconfig, Buffer.from(secret.data.kubeconfig, 'base64'), { mode: 0o600 });
      // The agent's own kubeconfig, dialled from the pod's network namespace (as the agent does).
      const { stdout } = await run('/usr/bin/nsenter', [
        `--net=/proc/${byName.get('agent')!.pid}/ns/net`,
        '--',
        KUBECTL,
        '--kubeconfig',
        kubeconfig,
        'get',
        'customresourcedefinitions.apiextensions.k8s.io/nodepools.apps.openyurt.io',
        '-o',
        'name',
      ]);
      expect(stdout.trim()).toBe('customresourcedefinition.apiextensions.k8s.io/nodepools.apps.openyurt.io');
      const all = await host.requestJson<{ items: Obj[] }>(HttpMethod.GET, '/apis/poolspirit.io/v1alpha1/poolspirits');
      const ps = all.items.find((x) => x.spec.nodePool === node.pool)!;
      expect(ps.status.conditions.find((x: Obj) => x.type === 'Bootstrapped').status).toBe('True');
    });

    it('is measured by the capacity probe in its cgroups: tmpfs charged to etcd, limits as the kernel enforces them', async () => {
      const report = await runCapacityProbe({
        ...DEFAULT_CAPACITY_OPTIONS,
        target: {
          kind: 'local',
          // The pod this file's fleet runs; stopping the target only closes the probe's relays into it.
          start: (o) => attachToPoolSpiritPod({ admin: fleet.clusters[0]!.kubeConfig, node, http: o.http }),
        },
        nodes: 20,
        pods: 40,
        objectBytes: 4096,
        contenders: 5,
        kills: 0,
        patchStormSeconds: 4,
        timeScale: 10,
        idleSeconds: 3,
        compareUpstream: false,
      });
      expect(report.target.runsOn).toEqual({ kind: 'real-node', node: node.name, pod: pod.metadata.name });
      const peaks = report.memory.product!.pod!;
      // The kernel's limits are the rendered ones: the pod's is their sum (every container has one).
      expect(peaks.containers.etcd!.limitBytes).toBe(2 * 2 ** 30);
      expect(peaks.containers['kube-apiserver']!.limitBytes).toBe(2 ** 30);
      expect(peaks.containers.agent!.limitBytes).toBe(128 * 2 ** 20);
      expect(peaks.limitBytes).toBe(2 ** 30 + 2 * 2 ** 30 + 128 * 2 ** 20);
      expect(peaks.oomKills).toBe(0);
      // etcd's data dir is tmpfs charged to the etcd container: its working set holds at least what tmpfs holds.
      const written = report.load.etcd.afterWrite;
      expect(written.tmpfsBytes).toBeGreaterThan(64 * 2 ** 20);
      expect(written.pod!.containers.etcd!.workingSetBytes).toBeGreaterThanOrEqual(written.tmpfsBytes!);
      expect(written.pod!.shmemBytes).toBeGreaterThanOrEqual(written.tmpfsBytes! * 0.9);
      expect(peaks.workingSetBytes).toBeGreaterThan(peaks.containers.etcd!.workingSetBytes);
      const idle = report.pod!.idle;
      expect(idle.cpuMillicores).toBeGreaterThan(0);
      // The pod's CPU is its containers' (and the sandbox's, which sleeps): the parts cannot exceed the whole.
      const parts = Object.values(idle.containers).map((c) => c.cpuMillicores!);
      expect(parts).toHaveLength(3);
      expect(parts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(idle.cpuMillicores! * 1.05 + 1);
      expect(report.patchStorm.product!.storm).toMatchObject({ memoryBasis: 'cgroup', errors: 0 });
      expect(report.patchStorm.product!.storm.samples.some((s) => s.windowP99Ms !== null)).toBe(true);
      expect(report.leaderElection.overlaps).toBe(0);
    }, 120_000);

    it('keeps the pod through a killed containerd and a killed kubelet, each restarted', async () => {
      const host = RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig);
      const before = Object.fromEntries([...byName].map(([name, ct]) => [name, ct.pid]));
      const podReady = async () => {
        const p = await host.requestJson<Obj>(
          HttpMethod.GET,
          `/api/v1/namespaces/${PRODUCT_NAMESPACE}/pods/${pod.metadata.name}`,
        );
        return p.status.conditions.some((x: Obj) => x.type === 'Ready' && x.status === 'True');
      };
      // containerd first: a kubelet that outlives a containerd restart reconnects on gRPC's back-off, which on a
      // loaded machine left it unable to stop the pod for the tests after this one; restarted last, it starts
      // against the running containerd.
      for (const component of ['containerd', 'kubelet'] as const) {
        const oldPid = node.pids()[component];
        await node.restart(component);
        expect(node.pids()[component]).not.toBe(oldPid);
        // The containers outlive both (runc's shims hold them), and the restarted runtime finds them again.
        const running = await waitFor(
          async () => {
            const now = await node.containers();
            const pids = Object.fromEntries(
              now
                .filter((c) => c.labels['io.kubernetes.pod.uid'] === pod.metadata.uid && c.status === 'RUNNING')
                .map((c) => [c.labels['io.kubernetes.container.name'], c.pid]),
            );
            return Object.keys(pids).length === 4 ? pids : undefined;
          },
          30_000,
          `the pod's containers running after ${component} restarted`,
          250,
        );
        for (const name of ['kube-apiserver', 'etcd', 'agent']) expect(running[name], name).toBe(before[name]);
        await waitFor(podReady, 30_000, `the pod Ready after ${component} restarted`, 250);
      }
    });

    /**
     * Merge-patches the node's pool's PoolSpirit with kubectl, as an operator would, then waits until its
     * WorkloadReady condition matches `said`. A poll that does not match throws, so a timeout names what the
     * status said last (waitFor reports the last error). The wait covers a reconcile, a Recreate rollout, the
     * kubelet's attempt and its back-off, and the status written, on a loaded two-core machine.
     */
    async function patchUntilWorkloadSays(patch: object, said: RegExp, what: string): Promise<Obj> {
      const admin = fleet.clusters[0]!.kubeconfigPath;
      const all = await RawObjectApi.fromKubeConfig(fleet.clusters[0]!.kubeConfig).requestJson<{ items: Obj[] }>(
        HttpMethod.GET,
        '/apis/poolspirit.io/v1alpha1/poolspirits',
      );
      const ps = all.items.find((x) => x.spec.nodePool === node.pool)!;
      const target = `poolspirits.poolspirit.io/${ps.metadata.name}`;
      await run(KUBECTL, ['--kubeconfig', admin, 'patch', target, '--type', 'merge', '-p', JSON.stringify(patch)]);
      return waitFor(
        async () => {
          const { stdout } = await run(KUBECTL, ['--kubeconfig', admin, 'get', target, '-o', 'json']);
          const wl = (JSON.parse(stdout) as Obj).status.conditions.find((x: Obj) => x.type === 'WorkloadReady');
          if (said.test(`${wl?.reason} ${wl?.message}`)) return wl as Obj;
          throw new Error(`WorkloadReady: ${JSON.stringify(wl)}`);
        },
        90_000,
        what,
        500,
      );
    }

    it('quotes an image the node cannot get in the PoolSpirit status (no registry is reachable)', async () => {
      const condition = await patchUntilWorkloadSays(
        { spec: { agent: { version: '0.0.0-absent' } } },
        /ErrImagePull|ImagePullBackOff/,
        'WorkloadReady quoting the image pull failure',
      );
      expect(condition.status).toBe('False');
      expect(`${condition.reason} ${condition.message}`).toContain('ghcr.io/pool-spirit/agent:0.0.0-absent');
    }, 120_000);

    it('names an OOM kill in the PoolSpirit status: the agent under a limit its process cannot start in', async () => {
      // The image back to one the node has, and a memory limit far below what Node.js needs to start: the
      // kernel kills it in its cgroup, and the kubelet says OOMKilled.
      const condition = await patchUntilWorkloadSays(
        {
          spec: {
            agent: { version: null, resources: { requests: { memory: '8Mi' }, limits: { memory: '16Mi' } } },
          },
        },
        /OOMKilled/,
        'WorkloadReady naming the OOM kill',
      );
      expect(condition.status).toBe('False');
      expect(condition.message).toMatch(/^container agent is in \w+ \(OOMKilled, exit code 137\)/);
    }, 120_000);
  },
);
