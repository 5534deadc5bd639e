import { describe, expect, it } from 'vitest';
import {
  covers,
  fieldDiffs,
  type KubeObject,
  meaningfulTransitions,
  objectKey,
  objectsToApply,
  observeWorkload,
  type PoolSpiritStatus,
  poolSpiritStatus,
  renderPoolSpirit,
  type StatusInputs,
  stableHash,
} from '../../core/index.ts';
import { NOW, renderInput } from './fixtures.ts';
import { type Any, find, pkiOf } from './helpers.ts';

/** What an API server hands back after applying: server metadata, defaults, normalised quantities, status. */
function asServerReturns(obj: KubeObject, i: number): KubeObject {
  const live = structuredClone(obj) as Any;
  Object.assign(live.metadata, {
    uid: `uid-${i}`,
    resourceVersion: `${100 + i}`,
    creationTimestamp: '2026-01-01T00:00:00Z',
    generation: 1,
    managedFields: [{ manager: 'pool-spirit' }],
  });
  if (live.kind === 'Deployment') {
    const pod = live.spec.template.spec;
    live.spec.progressDeadlineSeconds = 600;
    pod.restartPolicy = 'Always';
    pod.schedulerName = 'default-scheduler';
    delete pod.hostNetwork; // false is omitted on output
    for (const c of pod.containers) {
      c.imagePullPolicy = 'IfNotPresent';
      c.terminationMessagePath = '/dev/termination-log';
      if (c.resources.limits?.memory === '1Gi') c.resources.limits.memory = '1024Mi';
    }
    live.status = { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };
  }
  if (live.kind === 'Service') {
    live.spec.clusterIP = '10.96.0.10';
    live.spec.sessionAffinity = 'None';
  }
  return live;
}

describe('objectsToApply', () => {
  it('applies everything when nothing exists, and nothing when the cluster already has it', async () => {
    const r = await renderPoolSpirit(await renderInput());
    expect(objectsToApply(r.objects, new Map())).toHaveLength(r.objects.length);
    const live = new Map(r.objects.map((o, i) => [objectKey(o), asServerReturns(o, i)]));
    expect(objectsToApply(r.objects, live)).toEqual([]);
    // and a second render from the stored PKI is still a no-op
    const again = await renderPoolSpirit(await renderInput({ existingPki: pkiOf(r) }));
    expect(objectsToApply(again.objects, live)).toEqual([]);
  });

  it('applies exactly the object a spec change touches', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const live = new Map(r.objects.map((o, i) => [objectKey(o), asServerReturns(o, i)]));
    const changed = await renderPoolSpirit(
      await renderInput({ existingPki: pkiOf(r), raw: { agent: { extraArgs: { 'log-level': 'debug' } } } }),
    );
    expect(objectsToApply(changed.objects, live).map((o) => o.kind)).toEqual(['Deployment']);
  });

  it('notices drift: a changed field, a removed label, an extra list element', () => {
    const desired: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'n', labels: { x: '1' } },
      data: { k: 'v' },
    };
    expect(fieldDiffs(desired, { ...desired, data: { k: 'w', other: 'kept' } })).toEqual(['.data.k']);
    expect(fieldDiffs(desired, { ...desired, metadata: { name: 'a', namespace: 'n' } })).toEqual(['.metadata.labels']);
    expect(fieldDiffs({ a: [{ name: 'x', v: 1 }] }, { a: [{ name: 'x', v: 1 }, { name: 'y' }] })).toEqual(['.a']);
    expect(
      fieldDiffs(
        {
          a: [
            { name: 'x', v: 1 },
            { name: 'y', v: 2 },
          ],
        },
        {
          a: [
            { name: 'y', v: 2, d: 0 },
            { name: 'x', v: 1 },
          ],
        },
      ),
    ).toEqual([]);
    expect(fieldDiffs({ r: { limits: { memory: '1Gi' } } }, { r: { limits: { memory: '1073741824' } } })).toEqual([]);
    expect(fieldDiffs({ r: { limits: { memory: '1Gi' } } }, { r: { limits: { memory: '1G' } } })).toEqual([
      '.r.limits.memory',
    ]);
    expect(fieldDiffs({ flag: false, list: [], obj: {} }, {})).toEqual([]);
  });
});

describe('stableHash', () => {
  it('ignores key order and sees any value change', () => {
    expect(stableHash({ a: 1, b: { c: [1, 2] } })).toBe(stableHash({ b: { c: [1, 2] }, a: 1 }));
    expect(stableHash({ a: 1, b: { c: [2, 1] } })).not.toBe(stableHash({ a: 1, b: { c: [1, 2] } }));
  });
});

describe('poolSpiritStatus', () => {
  const render = {
    endpoint: 'https://x:443',
    versions: { bundle: '0.1.0', etcd: '3.6.16-0' },
    bootstrapHash: 'h1',
    pki: { notAfter: '2027-01-01T00:00:00Z', caNotAfter: '2036-01-01T00:00:00Z' },
  };
  const ready = { exists: true, upToDate: true, ready: true, currentVersions: { bundle: '0.1.0' } };
  const base: StatusInputs = { generation: 3, now: NOW, render, secretsApplied: true, workload: ready };
  const cond = (s: PoolSpiritStatus, type: string) => s.conditions!.find((c) => c.type === type)!;

  it('is Available when certificates, workload and bootstrap are ready, whatever the leader', () => {
    const s = poolSpiritStatus({ ...base, previous: { bootstrap: { appliedHash: 'h1' } } });
    expect(cond(s, 'Available')).toMatchObject({ status: 'True', observedGeneration: 3 });
    expect(cond(s, 'LeaderElected')).toMatchObject({ status: 'False', reason: 'NoLeader' });
    expect(s.phase).toBe('Running');
    expect(s.observedGeneration).toBe(3);
    expect(s.versions).toEqual({ desired: render.versions, current: { bundle: '0.1.0' } });
    expect(s).not.toHaveProperty('leader');
  });

  it('is not Available while bootstrap is pending or the workload is not ready', () => {
    const pending = poolSpiritStatus({ ...base, previous: { bootstrap: { appliedHash: 'old' } } });
    expect(cond(pending, 'Bootstrapped').status).toBe('False');
    expect(cond(pending, 'Available')).toMatchObject({ status: 'False', reason: 'NotBootstrapped' });
    const rolling = poolSpiritStatus({
      ...base,
      workload: { exists: true, upToDate: false, ready: true },
      previous: { bootstrap: { appliedHash: 'h1' } },
    });
    expect(cond(rolling, 'Available')).toMatchObject({ status: 'False', reason: 'WorkloadNotReady' });
    expect(cond(rolling, 'Bootstrapped').status).toBe('Unknown');
    expect(rolling.phase).toBe('Provisioning');
    const noSecrets = poolSpiritStatus({ ...base, secretsApplied: false });
    expect(cond(noSecrets, 'Available').reason).toBe('CertificatesNotReady');
  });

  it('reports a fresh leader as elected and an old renewal as stale', () => {
    const fresh = poolSpiritStatus({
      ...base,
      previous: { leader: { holder: 'node-1', renewTime: new Date(NOW.getTime() - 5_000).toISOString() } },
    });
    expect(cond(fresh, 'LeaderElected')).toMatchObject({ status: 'True', message: 'node-1 is the leader YurtHub' });
    const stale = poolSpiritStatus({
      ...base,
      previous: { leader: { holder: 'node-1', renewTime: new Date(NOW.getTime() - 120_000).toISOString() } },
    });
    expect(cond(stale, 'LeaderElected')).toMatchObject({ status: 'False', reason: 'LeaderStale' });
  });

  it('says Invalid with the field, and keeps the other conditions as they were', () => {
    const running = poolSpiritStatus({ ...base, previous: { bootstrap: { appliedHash: 'h1' } } });
    const invalid = poolSpiritStatus({
      generation: 4,
      now: NOW,
      previous: running,
      invalid: [{ field: 'spec.etcd.extraArgs.data-dir', message: 'owned' }],
    });
    expect(invalid.phase).toBe('Invalid');
    expect(invalid.observedGeneration).toBe(4);
    expect(cond(invalid, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: expect.stringContaining('spec.etcd.extraArgs.data-dir'),
    });
    expect(cond(invalid, 'WorkloadReady')).toEqual(cond(running, 'WorkloadReady'));
  });

  it('keeps lastTransitionTime while a condition holds', () => {
    const first = poolSpiritStatus({ ...base, previous: { bootstrap: { appliedHash: 'h1' } } });
    const later = new Date(NOW.getTime() + 60_000);
    const second = poolSpiritStatus({ ...base, now: later, previous: { ...first, bootstrap: { appliedHash: 'h1' } } });
    expect(cond(second, 'Available').lastTransitionTime).toBe(NOW.toISOString());
    const down = poolSpiritStatus({
      ...base,
      now: later,
      workload: { exists: true, upToDate: true, ready: false },
      previous: { ...second, bootstrap: { appliedHash: 'h1' } },
    });
    expect(cond(down, 'Available').lastTransitionTime).toBe(later.toISOString());
    expect(down.phase).toBe('Degraded');
  });
});

describe('meaningfulTransitions', () => {
  const status = (available: 'True' | 'False', extra: Partial<PoolSpiritStatus> = {}): PoolSpiritStatus => ({
    conditions: [
      {
        type: 'Available',
        status: available,
        reason: available === 'True' ? 'Available' : 'WorkloadNotReady',
        message: 'm',
        lastTransitionTime: NOW.toISOString(),
      },
    ],
    ...extra,
  });

  it('reports becoming available or unavailable, and nothing for an unchanged status', () => {
    expect(meaningfulTransitions(status('False'), status('True'))).toEqual([
      { type: 'Normal', reason: 'Available', message: 'm' },
    ]);
    expect(meaningfulTransitions(status('True'), status('False'))).toEqual([
      { type: 'Warning', reason: 'Unavailable', message: 'm' },
    ]);
    expect(meaningfulTransitions(status('True'), status('True', { observedGeneration: 9 }))).toEqual([]);
    expect(meaningfulTransitions(undefined, status('False'))).toEqual([]);
  });

  it('reports a new leader and a newly invalid spec once', () => {
    const a = status('True', { leader: { holder: 'n1' } });
    expect(meaningfulTransitions(a, status('True', { leader: { holder: 'n2' } }))).toEqual([
      { type: 'Normal', reason: 'LeaderChanged', message: 'leader moved from n1 to n2' },
    ]);
    const invalid = poolSpiritStatus({ generation: 2, now: NOW, invalid: [{ field: 'spec.x', message: 'bad' }] });
    const events = meaningfulTransitions(a, invalid);
    expect(events).toEqual([{ type: 'Warning', reason: 'InvalidSpec', message: 'invalid spec: spec.x: bad' }]);
    expect(meaningfulTransitions(invalid, invalid)).toEqual([]);
  });
});

describe('observeWorkload', () => {
  it('reads readiness, rollout and running versions from the live Deployment', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const desired = find(r, 'Deployment');
    const live = asServerReturns(desired, 0);
    expect(observeWorkload(live, desired)).toEqual({
      exists: true,
      upToDate: true,
      ready: true,
      currentVersions: r.versions,
    });
    expect(observeWorkload(undefined)).toEqual({ exists: false, upToDate: false, ready: false });
    const rolling = { ...live, metadata: { ...live.metadata, generation: 2 } };
    expect(observeWorkload(rolling, desired)).toMatchObject({ upToDate: false, currentVersions: undefined });
  });
});

describe('covers', () => {
  const desired = { spec: { replicas: 1, template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } } };
  const live = () => ({ ...structuredClone(desired), spec: { ...structuredClone(desired.spec), paused: false } });

  it('answers as fieldDiffs does', () => {
    expect(covers(desired, live(), undefined)).toBe(true);
    const other = live();
    other.spec.template.spec.containers[0].image = 'x:2';
    expect(covers(desired, other, undefined)).toBe(false);
  });

  it('remembers the answer for a frozen desired value and a live version, and only then', () => {
    const frozen = Object.freeze(structuredClone(desired));
    const changed = live();
    changed.spec.template.spec.containers[0].image = 'x:2';
    // The same version always names the same content in an apiserver: a second answer for it is the first.
    expect(covers(frozen, live(), 'uid@1')).toBe(true);
    expect(covers(frozen, changed, 'uid@1')).toBe(true);
    expect(covers(frozen, changed, 'uid@2')).toBe(false);
    // A value that may still change is compared every time.
    const open = structuredClone(desired);
    expect(covers(open, live(), 'uid@1')).toBe(true);
    expect(covers(open, changed, 'uid@1')).toBe(false);
  });
});
