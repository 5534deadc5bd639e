import { describe, expect, it } from 'vitest';
import { type PodLike, podProblem, poolSpiritStatus, type WorkloadObservation } from '../../core/status.ts';

const ready: PodLike = {
  metadata: { name: 'ok' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

describe('podProblem: why a pool-spirit pod is not ready, in words', () => {
  it('names the pool and the scheduler reason when no node can take the pod', () => {
    const pending: PodLike = {
      metadata: { name: 'p' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
          },
        ],
      },
    };
    expect(podProblem([pending], 'hangzhou')).toEqual({
      reason: 'Unschedulable',
      message:
        "no node can run the pool-spirit pod: NodePool hangzhou needs a Ready node that fits it (scheduler: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.)",
    });
  });

  it('quotes the failing container and the error line its binary printed, with the exit code', () => {
    const crashing: PodLike = {
      metadata: { name: 'c' },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'False' },
        ],
        containerStatuses: [
          { name: 'etcd', ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } },
          {
            name: 'kube-apiserver',
            ready: false,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off restarting failed container' } },
            lastState: {
              terminated: {
                exitCode: 1,
                reason: 'Error',
                message: 'I1202 starting\nError: unknown flag: --bogus-flag\nUsage:\n  kube-apiserver [flags]',
              },
            },
          },
        ],
      },
    };
    expect(podProblem([crashing], 'p')).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'container kube-apiserver is in CrashLoopBackOff (exit code 1): Error: unknown flag: --bogus-flag',
    });
  });

  it("names an OOM kill: the kubelet's reason beside the exit code", () => {
    const oom: PodLike = {
      metadata: { name: 'o' },
      status: {
        phase: 'Running',
        conditions: [{ type: 'PodScheduled', status: 'True' }],
        containerStatuses: [
          {
            name: 'agent',
            ready: false,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 137, reason: 'OOMKilled' } },
          },
        ],
      },
    };
    expect(podProblem([oom], 'p')).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'container agent is in CrashLoopBackOff (OOMKilled, exit code 137)',
    });
  });

  it('skips ready and deleting pods; says nothing it does not know', () => {
    const deleting: PodLike = {
      metadata: { name: 'd', deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: { phase: 'Running' },
    };
    expect(podProblem([ready, deleting], 'p')).toBeUndefined();
    expect(podProblem([{ metadata: { name: 'x' }, status: { phase: 'Pending' } }], 'p')).toBeUndefined();
    expect(
      podProblem(
        [{ metadata: { name: 'x' }, status: { containerStatuses: [{ name: 'agent', ready: false, state: {} }] } }],
        'p',
      ),
    ).toEqual({ reason: 'ContainersNotReady', message: "the pool-spirit pod's containers are not ready: agent" });
  });

  it('bounds the message: a binary that prints a huge line does not fill the condition', () => {
    const noisy: PodLike = {
      metadata: { name: 'n' },
      status: {
        containerStatuses: [
          {
            name: 'etcd',
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 2, message: `Error: ${'x'.repeat(5000)}` } },
          },
        ],
      },
    };
    expect(podProblem([noisy], 'p')!.message.length).toBeLessThanOrEqual(400);
  });

  it('becomes the WorkloadReady condition of the PoolSpirit', () => {
    const workload: WorkloadObservation = {
      exists: true,
      upToDate: true,
      ready: false,
      problem: { reason: 'Unschedulable', message: 'no node can run it' },
    };
    const status = poolSpiritStatus({ generation: 1, now: new Date('2026-12-02T00:00:00Z'), workload });
    expect(status.conditions?.find((c) => c.type === 'WorkloadReady')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: 'no node can run it',
    });
    const rolling = poolSpiritStatus({ generation: 1, now: new Date(), workload: { ...workload, upToDate: false } });
    expect(rolling.conditions?.find((c) => c.type === 'WorkloadReady')?.message).toBe(
      'the pool-spirit pod is being replaced with the desired one; no node can run it',
    );
  });
});
