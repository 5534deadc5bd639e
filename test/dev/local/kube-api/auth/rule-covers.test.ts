import { describe, expect, it } from 'vitest';
import { isOnlyMutatingGcFields } from '../../../../../dev/local/kube-api/auth/escalation.ts';
import {
  compactRules,
  compactString,
  notHeldMessage,
} from '../../../../../dev/local/kube-api/auth/escalation-message.ts';
import { breakdownRule, covers, ruleCovers } from '../../../../../dev/local/kube-api/auth/rule-covers.ts';
import type { PolicyRule } from '../../../../../dev/local/kube-api/auth/types.ts';

const r = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const url = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });
const covered = (owner: PolicyRule[], rules: PolicyRule[]) => covers(owner, rules).missing.length === 0;

describe('breakdownRule (kube BreakdownRule)', () => {
  it('splits into one verb × group × resource × name, groups outermost, then URLs', () => {
    expect(
      breakdownRule({
        verbs: ['get', 'list'],
        apiGroups: ['', 'apps'],
        resources: ['pods'],
        resourceNames: ['a', 'b'],
        nonResourceURLs: ['/x'],
      }),
    ).toEqual([
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['b'] },
      { verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['b'] },
      { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'], resourceNames: ['b'] },
      { verbs: ['list'], apiGroups: ['apps'], resources: ['pods'], resourceNames: ['a'] },
      { verbs: ['list'], apiGroups: ['apps'], resources: ['pods'], resourceNames: ['b'] },
      { verbs: ['get'], nonResourceURLs: ['/x'] },
      { verbs: ['list'], nonResourceURLs: ['/x'] },
    ]);
  });
});

describe('covers (kube Covers / ruleCovers)', () => {
  it('matches verbs, groups and resources exactly or by `*`, never the other way round', () => {
    expect(covered([r(['get', 'list'], [''], ['pods'])], [r(['get'], [''], ['pods'])])).toBe(true);
    expect(covered([r(['get'], [''], ['pods'])], [r(['get', 'watch'], [''], ['pods'])])).toBe(false);
    expect(
      covered([r(['*'], ['*'], ['*'])], [r(['escalate'], ['rbac.authorization.k8s.io'], ['roles/anything'])]),
    ).toBe(true);
    expect(covered([r(['get'], ['apps'], ['pods'])], [r(['get'], [''], ['pods'])])).toBe(false);
    // A `*` to grant is held only through a `*`.
    expect(covered([r(['get', 'list', 'watch'], [''], ['pods'])], [r(['*'], [''], ['pods'])])).toBe(false);
    expect(covered([r(['get'], [''], ['pods', 'services'])], [r(['get'], [''], ['*'])])).toBe(false);
  });

  it('covers a subresource through `resource/sub` or `*/sub`, but a resource does not cover its subresources', () => {
    expect(covered([r(['get'], ['apps'], ['*/status'])], [r(['get'], ['apps'], ['deployments/status'])])).toBe(true);
    expect(covered([r(['get'], ['apps'], ['deployments'])], [r(['get'], ['apps'], ['deployments/status'])])).toBe(
      false,
    );
    expect(covered([r(['get'], ['apps'], ['*/status'])], [r(['get'], ['apps'], ['deployments'])])).toBe(false);
    expect(covered([r(['get'], ['apps'], ['*/status'])], [r(['get'], ['apps'], ['deployments/scale'])])).toBe(false);
  });

  it('an owner rule without resourceNames covers any name; with names, only those and never a nameless grant', () => {
    expect(covered([r(['get'], [''], ['secrets'])], [r(['get'], [''], ['secrets'], ['a', 'b'])])).toBe(true);
    expect(covered([r(['get'], [''], ['secrets'], ['a'])], [r(['get'], [''], ['secrets'], ['a'])])).toBe(true);
    expect(covered([r(['get'], [''], ['secrets'], ['a'])], [r(['get'], [''], ['secrets'], ['a', 'b'])])).toBe(false);
    expect(covered([r(['get'], [''], ['secrets'], ['a'])], [r(['get'], [''], ['secrets'])])).toBe(false);
  });

  it('covers nonResourceURLs exactly or by a `*`-suffixed prefix, and only with URL rules', () => {
    expect(covered([url(['get'], ['/healthz'])], [url(['get'], ['/healthz'])])).toBe(true);
    expect(covered([url(['get'], ['/apis/*'])], [url(['get'], ['/apis/apps/v1'])])).toBe(true);
    expect(covered([url(['get'], ['/apis**'])], [url(['get'], ['/apis/x'])])).toBe(true);
    expect(covered([url(['get'], ['/apis/*'])], [url(['get'], ['/api'])])).toBe(false);
    expect(covered([url(['get'], ['/apis/*'])], [url(['post'], ['/apis/x'])])).toBe(false);
    expect(covered([r(['*'], ['*'], ['*'])], [url(['get'], ['/metrics'])])).toBe(false);
    expect(covered([url(['*'], ['*'])], [r(['get'], [''], ['pods'])])).toBe(false);
  });

  it('each part is covered by one owner rule on its own, and says which one (the first)', () => {
    const owner = [r(['get'], [''], ['pods']), r(['list'], [''], ['pods']), r(['get', 'list'], [''], ['pods'])];
    const result = covers(owner, [r(['get', 'list', 'watch'], [''], ['pods'])]);
    expect(result.parts.map((p) => p.owner)).toEqual([0, 1, -1]);
    expect(result.missing).toEqual([{ verbs: ['watch'], apiGroups: [''], resources: ['pods'] }]);
    expect(ruleCovers(owner[2], { verbs: ['list'], apiGroups: [''], resources: ['pods'] })).toBe(true);
  });
});

describe('the escalation message (kube CompactRules, CompactString, ConfirmNoEscalation)', () => {
  it('merges the verbs of one group/resource/name in order and describes rules as Go prints them', () => {
    const missing = covers(
      [],
      [
        r(['get', 'watch'], [''], ['configmaps']),
        r(['get'], [''], ['secrets'], ['a', 'b']),
        url(['get', 'post'], ['/metrics']),
      ],
    ).missing;
    const compact = compactRules(missing);
    expect(compact.map(compactString)).toEqual([
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["post"]}',
      '{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "watch"]}',
      '{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}',
    ]);
    expect(notHeldMessage({ name: 'u', groups: ['g1', 'system:authenticated'] }, missing, [])).toBe(
      'user "u" (groups=["g1" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "watch"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}\n' +
        '{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}\n' +
        '{NonResourceURLs:["/metrics"], Verbs:["post"]}',
    );
  });

  it('appends the rule resolution errors as an aggregate, one message without brackets', () => {
    const missing = covers([], [r(['get'], [''], ['pods'])]).missing;
    const one = notHeldMessage({ name: 'u', groups: [] }, missing, [
      'clusterroles.rbac.authorization.k8s.io "x" not found',
    ]);
    expect(one).toBe(
      'user "u" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [clusterroles.rbac.authorization.k8s.io "x" not found]',
    );
    const two = notHeldMessage({ name: 'u', groups: [] }, missing, ['e1', 'e2', 'e1']);
    expect(two.endsWith('; resolution errors: [[e1, e2]]')).toBe(true);
  });
});

describe('isOnlyMutatingGcFields (kube IsOnlyMutatingGCFields)', () => {
  const old = {
    apiVersion: 'v1',
    kind: 'Role',
    metadata: { name: 'r', resourceVersion: '5', labels: { a: 'b' } },
    rules: [r(['get'], [''], ['pods'])],
  };
  it('ignores ownerReferences, finalizers and managedFields, and empty lists against absent ones', () => {
    const gc = structuredClone(old) as any;
    gc.metadata.finalizers = ['x'];
    gc.metadata.ownerReferences = [{ uid: 'u' }];
    gc.metadata.managedFields = [];
    gc.metadata.annotations = {};
    expect(isOnlyMutatingGcFields(gc, old)).toBe(true);
  });
  it('sees any other change', () => {
    const labelled = structuredClone(old) as any;
    labelled.metadata.labels.c = 'd';
    expect(isOnlyMutatingGcFields(labelled, old)).toBe(false);
    const ruled = structuredClone(old) as any;
    ruled.rules[0].verbs.push('list');
    expect(isOnlyMutatingGcFields(ruled, old)).toBe(false);
  });
});
