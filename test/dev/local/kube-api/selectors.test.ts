import { describe, expect, it } from 'vitest';
import {
  labelSelectorFromMeta,
  labelSelectorToString,
  matchFields,
  matchLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from '../../../../dev/local/kube-api/selectors.ts';

const matches = (sel: string, labels?: Record<string, string>) => matchLabels(parseLabelSelector(sel), labels);

describe('label selectors', () => {
  it('matches equality, inequality, set and existence requirements', () => {
    const labels = { app: 'web', tier: 'front', 'example.com/team': 'a' };
    expect(matches('app=web', labels)).toBe(true);
    expect(matches('app==web', labels)).toBe(true);
    expect(matches('app!=web', labels)).toBe(false);
    expect(matches('app!=db', labels)).toBe(true);
    expect(matches('missing!=x', labels)).toBe(true); // != matches when the key is absent, like kube
    expect(matches('app in (db, web)', labels)).toBe(true);
    expect(matches('app notin (db,web)', labels)).toBe(false);
    expect(matches('missing notin (x)', labels)).toBe(true);
    expect(matches('tier', labels)).toBe(true);
    expect(matches('!tier', labels)).toBe(false);
    expect(matches('!missing', labels)).toBe(true);
    expect(matches('example.com/team=a,app=web', labels)).toBe(true);
    expect(matches('app=web,tier=back', labels)).toBe(false);
    expect(matches('', labels)).toBe(true);
    expect(matches('app', undefined)).toBe(false);
    expect(matches('!app', undefined)).toBe(true);
  });

  it('treats in/notin as values in value position and empty set members as ""', () => {
    expect(matches('x in (in,notin)', { x: 'in' })).toBe(true);
    expect(matches('x in (a,,b)', { x: '' })).toBe(true);
    expect(matches('x in ()', { x: '' })).toBe(true);
    expect(matches('x=', { x: '' })).toBe(true);
  });

  it("supports kube's gt/lt extension", () => {
    expect(matches('n>5', { n: '10' })).toBe(true);
    expect(matches('n<5', { n: '10' })).toBe(false);
    expect(matches('n>5', { n: 'abc' })).toBe(false);
  });

  it('sorts requirements and prints them canonically', () => {
    expect(labelSelectorToString(parseLabelSelector('z in (b,a),!y,a=1'))).toBe('a=1,!y,z in (a,b)');
    expect(parseLabelSelector('z=1,a=2').requirements.map((r) => r.key)).toEqual(['a', 'z']);
  });

  it.each([
    ['a b', "unable to parse requirement: found 'b', expected: '=', '!=', '==', 'in', notin'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a=b,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a=(', "unable to parse requirement: found '(', expected: identifier"],
  ])("rejects %j with kube's message", (text, message) => {
    expect(() => parseLabelSelector(text)).toThrow(SelectorError);
    expect(() => parseLabelSelector(text)).toThrow(message);
  });

  it("validates keys and values with kube's messages", () => {
    expect(() => parseLabelSelector('-a=b')).toThrow(
      "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
    expect(() => parseLabelSelector('app=b$d')).toThrow(
      'unable to parse requirement: values[0][app]: Invalid value: "b$d": a valid label must be an empty string or consist of alphanumeric characters',
    );
    expect(() => parseLabelSelector(`app=${'x'.repeat(64)}`)).toThrow('must be no more than 63 characters');
    expect(() => parseLabelSelector('a/b/c')).toThrow('a qualified name must consist of');
    expect(() => parseLabelSelector('Bad_Prefix/x')).toThrow('prefix part a lowercase RFC 1123 subdomain');
  });

  it('converts metav1.LabelSelector', () => {
    const sel = labelSelectorFromMeta({
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }],
    });
    expect(sel && labelSelectorToString(sel)).toBe('app=web,tier in (a,b)');
    expect(labelSelectorFromMeta(undefined)).toBeUndefined();
    expect(matchLabels(labelSelectorFromMeta({})!, { x: '1' })).toBe(true);
    expect(() => labelSelectorFromMeta({ matchExpressions: [{ key: 'a', operator: 'Bogus' as never }] })).toThrow(
      SelectorError,
    );
  });
});

describe('field selectors', () => {
  const pod = {
    metadata: { name: 'p1', namespace: 'ns1' },
    spec: { nodeName: 'node-a', restartPolicy: 'Always' },
    status: { phase: 'Running', podIPs: [{ ip: '10.0.0.1' }] },
  };

  it('matches pod fields with =, == and !=', () => {
    const m = (text: string) => matchFields(parseFieldSelector(text, 'pods'), pod);
    expect(m('spec.nodeName=node-a')).toBe(true);
    expect(m('spec.nodeName==node-b')).toBe(false);
    expect(m('status.phase!=Pending,metadata.namespace=ns1')).toBe(true);
    expect(m('status.podIP=10.0.0.1')).toBe(true);
    expect(m('spec.schedulerName=')).toBe(true); // absent fields compare as ""
    expect(m('spec.host=node-a')).toBe(true); // kube's alias for old clients
    expect(m('')).toBe(true);
  });

  it('knows the per-kind fields kube supports', () => {
    expect(
      matchFields(parseFieldSelector('spec.unschedulable=false', 'nodes'), { metadata: { name: 'n' }, spec: {} }),
    ).toBe(true);
    expect(
      matchFields(parseFieldSelector('type=kubernetes.io/tls', 'secrets'), {
        metadata: { name: 's' },
        type: 'kubernetes.io/tls',
      }),
    ).toBe(true);
    expect(
      matchFields(parseFieldSelector('status.phase=Active', 'namespaces'), {
        metadata: { name: 'n' },
        status: { phase: 'Active' },
      }),
    ).toBe(true);
    const ev = {
      metadata: { name: 'e' },
      involvedObject: { kind: 'Pod', name: 'p1' },
      source: { component: 'kubelet' },
      reason: 'Started',
      type: 'Normal',
    };
    expect(
      matchFields(
        parseFieldSelector(
          'involvedObject.kind=Pod,involvedObject.name=p1,source=kubelet,reason=Started,type=Normal',
          'events',
        ),
        ev,
      ),
    ).toBe(true);
    expect(matchFields(parseFieldSelector('metadata.name=x', 'deployments.apps'), { metadata: { name: 'x' } })).toBe(
      true,
    );
  });

  it("rejects unsupported fields with kube's messages", () => {
    expect(() => parseFieldSelector('spec.foo=1', 'pods')).toThrow(
      new SelectorError('field label not supported: spec.foo'),
    );
    expect(() => parseFieldSelector('metadata.namespace=x', 'nodes')).toThrow(
      'field label not supported: metadata.namespace',
    );
    expect(() => parseFieldSelector('data.x=1', 'configmaps')).toThrow(
      '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    expect(() => parseFieldSelector('spec.type=Edge', 'nodepools.apps.openyurt.io')).toThrow(
      'field label not supported: spec.type',
    );
    expect(() =>
      parseFieldSelector('metadata.namespace=a', 'nodepools.apps.openyurt.io', { namespaced: false }),
    ).toThrow('field label not supported: metadata.namespace');
    expect(
      matchFields(
        parseFieldSelector('spec.type=Edge', 'nodepools.apps.openyurt.io', { selectableFields: ['.spec.type'] }),
        { spec: { type: 'Edge' } },
      ),
    ).toBe(true);
  });

  it('handles escapes and malformed terms like kube', () => {
    const cm = { metadata: { name: 'a,b=c', namespace: 'd' } };
    expect(matchFields(parseFieldSelector('metadata.name=a\\,b\\=c', 'configmaps'), cm)).toBe(true);
    expect(() => parseFieldSelector('metadata.name', 'pods')).toThrow(
      "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    );
    expect(() => parseFieldSelector('metadata.name=a\\x', 'pods')).toThrow(
      'invalid field selector: invalid escape sequence: \\x',
    );
    expect(() => parseFieldSelector('metadata.name=a=b', 'pods')).toThrow(
      'invalid field selector: unescaped character in value: =',
    );
  });
});
