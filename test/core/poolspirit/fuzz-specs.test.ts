/**
 * PoolSpirit specs, mutated thousands of times from a valid one (seeded): parsePoolSpiritSpec then the
 * whole render. Each case ends in a rendered pool or in field issues naming the broken field — never a
 * crash, never an error without a field, never a render of something the parser should have refused.
 */
import { describe, expect, it } from 'vitest';
import { type FieldIssue, parsePoolSpiritSpec, renderPoolSpirit, SpecRenderError } from '../../../core/index.ts';
import { fuzzSeed, type Mutation, mutate, pathsRelated, pathText, Rng } from '../../support/fuzz.ts';
import { renderInput } from '../fixtures.ts';

const SEED = fuzzSeed();
const CASES = 2500;

const VALID_SPEC = {
  nodePool: 'hangzhou',
  version: '0.1.0',
  apiServer: {
    image: 'registry.k8s.io/kube-apiserver',
    version: 'v1.32.0',
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
    extraArgs: { 'audit-log-maxage': '7', v: '2' },
  },
  etcd: {
    resources: { requests: { cpu: '50m' }, limits: { memory: '1Gi' } },
    storage: {
      medium: 'Memory',
      sizeLimit: '512Mi',
      quotaBackendBytes: '256Mi',
      autoCompaction: { mode: 'periodic', retention: '5m' },
      snapshotCount: 10000,
      maxWals: 2,
      maxSnapshots: 2,
    },
    extraArgs: { 'heartbeat-interval': '250' },
  },
  agent: { version: '0.1.0', resources: { requests: { cpu: 1, memory: '64Mi' } } },
  overrides: [
    { op: 'add', path: '/spec/template/metadata/annotations/example.com~1owner', value: 'team-a' },
    { op: 'add', path: '/spec/template/spec/containers/name=agent/imagePullPolicy', value: 'Always' },
  ],
  paused: false,
};

const CRASH =
  /Cannot read propert|Cannot set propert|is not a function|is not iterable|is not defined|Cannot convert|Maximum call stack|Invalid array length|Invalid time value|Invalid string length|circular structure/;

/** An issue names the mutated field when its field is that field, inside it, or a parent of it. */
function related(issues: FieldIssue[], m: Mutation): boolean {
  if (m.path.length === 0) return issues.length > 0;
  const mutated = pathText(['spec', ...m.path]);
  // A cross-field rule (request ≤ limit, quota fits sizeLimit) may report the other field of the pair, as
  // long as its message names the mutated one.
  const key = [...m.path].reverse().find((k): k is string => typeof k === 'string');
  return issues.some(
    (i) =>
      pathsRelated(i.field, mutated) ||
      (m.container === true && i.field.startsWith(mutated)) ||
      (key !== undefined && i.message.includes(key)),
  );
}

describe(`fuzzed PoolSpirit specs (seed ${SEED}; replay with PS_FUZZ_SEED=${SEED})`, () => {
  it('the base spec is valid and renders', async () => {
    const parsed = parsePoolSpiritSpec(VALID_SPEC);
    expect(parsed.ok ? [] : parsed.issues).toEqual([]);
    if (!parsed.ok) return;
    const r = await renderPoolSpirit(await renderInput({ raw: VALID_SPEC }));
    expect(r.objects.map((o) => o.kind)).toContain('Deployment');
  });

  it(`${CASES} mutated specs: each renders, or is refused with issues naming the field; none crashes`, async () => {
    const rng = new Rng(SEED);
    const problems: string[] = [];
    const outcome = { invalid: 0, renderRefused: 0, rendered: 0 };
    const input = await renderInput({ raw: VALID_SPEC });
    for (let i = 0; i < CASES; i++) {
      const m = mutate(rng, VALID_SPEC);
      const where = `case ${i} (seed ${SEED}): ${pathText(['spec', ...m.path])} ${m.op}`;
      let parsed: ReturnType<typeof parsePoolSpiritSpec>;
      try {
        parsed = parsePoolSpiritSpec(m.value);
      } catch (err) {
        problems.push(`${where} → parse threw ${(err as Error).name}: ${(err as Error).message.slice(0, 200)}`);
        continue;
      }
      if (!parsed.ok) {
        outcome.invalid++;
        if (parsed.issues.some((iss) => !iss.field || !iss.message))
          problems.push(`${where} → an issue without field or message`);
        else if (!related(parsed.issues, m))
          problems.push(`${where} → issues name other fields: ${parsed.issues.map((x) => x.field).join(', ')}`);
        continue;
      }
      try {
        const r = await renderPoolSpirit({ ...input, poolSpirit: { ...input.poolSpirit, spec: parsed.spec } });
        JSON.stringify(r.objects);
        if (!r.objects.some((o) => o.kind === 'Deployment')) problems.push(`${where} → rendered without a Deployment`);
        outcome.rendered++;
      } catch (err) {
        const e = err as Error;
        outcome.renderRefused++;
        if (!(e instanceof SpecRenderError))
          problems.push(`${where} → render threw ${e.name}: ${e.message.slice(0, 200)}`);
        else if (CRASH.test(e.message) || !related(e.issues, m))
          problems.push(`${where} → unclear render error: ${e.message.slice(0, 200)}`);
      }
    }
    console.info(`fuzzed specs (seed ${SEED}): ${JSON.stringify(outcome)}`);
    expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
    expect(problems, `${problems.length} problems in ${CASES} cases`).toEqual([]);
    expect(outcome.invalid + outcome.renderRefused).toBeGreaterThan(CASES * 0.5);
    expect(outcome.rendered).toBeGreaterThan(0);
  });

  it('treats names of Object.prototype members as ordinary names (regressions the fuzzer found)', () => {
    const issues = (raw: Record<string, unknown>) => {
      const r = parsePoolSpiritSpec({ nodePool: 'hangzhou', ...raw });
      return r.ok ? [] : r.issues;
    };
    expect(issues({ version: 'constructor' })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'spec.version',
          message: expect.stringMatching(/unknown bundle "constructor"/),
        }),
      ]),
    );
    expect(() =>
      parsePoolSpiritSpec({ nodePool: 'hangzhou', apiServer: { resources: { requests: { constructor: '1' } } } }),
    ).not.toThrow();
    expect(issues({ etcd: { extraArgs: { constructor: 'x' } } })).toEqual([]);
  });
});
