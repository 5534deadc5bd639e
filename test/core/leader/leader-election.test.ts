import { describe, expect, it } from 'vitest';
import {
  type Lease,
  leaseExpiry,
  microTime,
  nextLeaseAction,
  scaleLeaderElection,
  validateLeaderElectionConfig,
  YURTHUB_LEADER_ELECTION,
} from '../../../core/leader/index.ts';

const cfg = YURTHUB_LEADER_ELECTION;
const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

function lease(spec: Lease['spec'], rv = '7'): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'yurthub', namespace: 'kube-system', resourceVersion: rv },
    spec,
  };
}

describe('nextLeaseAction (client-go tryAcquireOrRenew)', () => {
  it('creates the Lease when there is none, held by me with zero transitions', () => {
    const action = nextLeaseAction(undefined, 'node-1', t(0), cfg);
    expect(action).toEqual({
      kind: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'yurthub', namespace: 'kube-system' },
        spec: {
          holderIdentity: 'node-1',
          leaseDurationSeconds: 15,
          acquireTime: '2026-01-01T00:00:00.000000Z',
          renewTime: '2026-01-01T00:00:00.000000Z',
          leaseTransitions: 0,
        },
      },
    });
    expect(
      nextLeaseAction(undefined, 'node-1', t(0), cfg, { namespace: 'kube-system', name: 'probe' }).kind === 'create' &&
        (
          nextLeaseAction(undefined, 'node-1', t(0), cfg, { namespace: 'kube-system', name: 'probe' }) as {
            lease: Lease;
          }
        ).lease.metadata.name,
    ).toBe('probe');
  });

  it('renews its own Lease: only renewTime moves, resourceVersion is kept for the compare-and-swap', () => {
    const held = lease({
      holderIdentity: 'node-1',
      leaseDurationSeconds: 15,
      acquireTime: microTime(t(0)),
      renewTime: microTime(t(2)),
      leaseTransitions: 3,
    });
    const action = nextLeaseAction(held, 'node-1', t(4), cfg);
    expect(action.kind).toBe('renew');
    if (action.kind !== 'renew') return;
    expect(action.lease.metadata.resourceVersion).toBe('7');
    expect(action.lease.spec).toEqual({ ...held.spec, renewTime: '2026-01-01T00:00:04.000000Z' });
  });

  it('waits while another holder is within renewTime + leaseDurationSeconds', () => {
    const held = lease({
      holderIdentity: 'node-2',
      leaseDurationSeconds: 15,
      renewTime: microTime(t(10)),
      leaseTransitions: 1,
    });
    expect(nextLeaseAction(held, 'node-1', t(24), cfg)).toEqual({ kind: 'wait', holder: 'node-2', expiresAt: t(25) });
    // Exactly at expiry the lease no longer protects its holder.
    expect(nextLeaseAction(held, 'node-1', t(25), cfg).kind).toBe('acquire');
  });

  it('takes over an expired Lease, counting a transition and keeping the resourceVersion', () => {
    const held = lease({
      holderIdentity: 'node-2',
      leaseDurationSeconds: 15,
      acquireTime: microTime(t(0)),
      renewTime: microTime(t(10)),
      leaseTransitions: 4,
    });
    const action = nextLeaseAction(held, 'node-1', t(26), cfg);
    expect(action).toMatchObject({ kind: 'acquire', previousHolder: 'node-2' });
    if (action.kind !== 'acquire') return;
    expect(action.lease.metadata.resourceVersion).toBe('7');
    expect(action.lease.spec).toEqual({
      holderIdentity: 'node-1',
      leaseDurationSeconds: 15,
      acquireTime: microTime(t(26)),
      renewTime: microTime(t(26)),
      leaseTransitions: 5,
    });
  });

  it('takes over a released Lease (empty holder) at once, and one with no renewTime', () => {
    const released = lease({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      renewTime: microTime(t(10)),
      leaseTransitions: 2,
    });
    expect(nextLeaseAction(released, 'node-1', t(10), cfg)).toMatchObject({
      kind: 'acquire',
      previousHolder: undefined,
      lease: { spec: { leaseTransitions: 3 } },
    });
    const noRenew = lease({ holderIdentity: 'node-2' });
    expect(nextLeaseAction(noRenew, 'node-1', t(0), cfg)).toMatchObject({
      kind: 'acquire',
      lease: { spec: { leaseTransitions: 1 } },
    });
  });

  it('honours the holder’s own lease duration, reading our rounded-up field as our scaled duration', () => {
    const scaled = scaleLeaderElection(cfg, 20); // 0.75 s lease, written as 1 s
    const ours = nextLeaseAction(undefined, 'node-2', t(0), scaled);
    expect(ours.kind === 'create' && ours.lease.spec?.leaseDurationSeconds).toBe(1);
    if (ours.kind !== 'create') return;
    expect(leaseExpiry(ours.lease, scaled)).toEqual(new Date(t(0).getTime() + 750));
    // A holder that wrote a longer duration than ours keeps it.
    const longer = lease({ holderIdentity: 'node-2', leaseDurationSeconds: 40, renewTime: microTime(t(0)) });
    expect(nextLeaseAction(longer, 'node-1', t(30), cfg).kind).toBe('wait');
    expect(nextLeaseAction(longer, 'node-1', t(41), cfg).kind).toBe('acquire');
  });

  it('refuses an empty identity and invalid configs, naming the field', () => {
    expect(() => nextLeaseAction(undefined, '', t(0), cfg)).toThrow(/identity/);
    expect(() => validateLeaderElectionConfig({ ...cfg, retryPeriodSeconds: 0 })).toThrow(/retryPeriodSeconds/);
    expect(() => validateLeaderElectionConfig({ ...cfg, leaseDurationSeconds: 10 })).toThrow(
      /leaseDurationSeconds must be greater than renewDeadlineSeconds/,
    );
    expect(() => validateLeaderElectionConfig({ ...cfg, renewDeadlineSeconds: 2.2 })).toThrow(
      /1.2 × retryPeriodSeconds/,
    );
    expect(validateLeaderElectionConfig(scaleLeaderElection(cfg, 10))).toEqual({
      leaseDurationSeconds: 1.5,
      renewDeadlineSeconds: 1,
      retryPeriodSeconds: 0.2,
    });
    expect(() => scaleLeaderElection(cfg, 0)).toThrow(/time scale/);
  });

  it('writes MicroTime with six fractional digits', () => {
    expect(microTime(new Date('2026-03-04T05:06:07.089Z'))).toBe('2026-03-04T05:06:07.089000Z');
  });
});
