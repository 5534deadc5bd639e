/** Just enough CloudFormation evaluation for the packaging tests: conditions, Fn::If, and walking policies. */

export type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: unknown };
export type Template = {
  Parameters?: Record<string, { Type: string; Default?: unknown }>;
  Resources: Record<string, Resource>;
  Conditions?: Record<string, unknown>;
  Outputs?: Record<string, unknown>;
};

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Logical id prefix serverless gives a function's resources (`cloudEvents` → `CloudEvents`). */
export const logicalName = (fn: string) => fn[0].toUpperCase() + fn.slice(1);

/**
 * Evaluates the template's conditions (Fn::Equals / Fn::Not / Fn::And / Fn::Or over literals and parameters,
 * a parameter taking its Default); `overrides` wins.
 */
export function evaluateConditions(
  template: Template,
  overrides: Record<string, boolean> = {},
): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  const evaluate = (expr: unknown): unknown => {
    if (!isObject(expr)) return expr;
    if ('Fn::Equals' in expr) {
      const [a, b] = expr['Fn::Equals'].map(evaluate);
      return JSON.stringify(a) === JSON.stringify(b);
    }
    if ('Fn::Not' in expr) return !evaluate(expr['Fn::Not'][0]);
    if ('Fn::And' in expr) return expr['Fn::And'].every((e: unknown) => evaluate(e) === true);
    if ('Fn::Or' in expr) return expr['Fn::Or'].some((e: unknown) => evaluate(e) === true);
    if ('Condition' in expr) return out[expr.Condition];
    if (typeof expr.Ref === 'string' && template.Parameters?.[expr.Ref]) return template.Parameters[expr.Ref].Default;
    throw new Error(`cannot evaluate condition expression ${JSON.stringify(expr)} offline`);
  };
  for (const [name, expr] of Object.entries(template.Conditions ?? {}))
    out[name] = name in overrides ? overrides[name] : (evaluate(expr) as boolean);
  return out;
}

const NO_VALUE = Symbol('AWS::NoValue');

/** A copy of `value` with each Fn::If resolved by `conditions` and AWS::NoValue removed. */
export function applyConditions<T>(value: T, conditions: Record<string, boolean>): T {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk).filter((x) => x !== NO_VALUE);
    if (!isObject(v)) return v;
    if (v.Ref === 'AWS::NoValue' && Object.keys(v).length === 1) return NO_VALUE;
    if ('Fn::If' in v && Object.keys(v).length === 1) {
      const [name, yes, no] = v['Fn::If'];
      if (!(name in conditions)) throw new Error(`Fn::If names an unknown condition ${name}`);
      return walk(conditions[name] ? yes : no);
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const w = walk(x);
      if (w !== NO_VALUE) out[k] = w;
    }
    return out;
  };
  return walk(value) as T;
}

export interface Statement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Principal?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every policy statement anywhere under `value` (role policies, trust policies, queue and bucket policies). */
export function statementsIn(value: unknown, where = ''): { where: string; statement: Statement }[] {
  const found: { where: string; statement: Statement }[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        walk(x, `${path}[${i}]`);
      });
      return;
    }
    if (!isObject(v)) return;
    if (Array.isArray(v.Statement))
      v.Statement.forEach((s: Statement, i: number) => {
        found.push({ where: `${path}.Statement[${i}]`, statement: s });
      });
    for (const [k, x] of Object.entries(v)) if (k !== 'Statement') walk(x, `${path}.${k}`);
  };
  walk(value, where);
  return found;
}

/**
 * `action on resource` for each pair an Allow statement of a role's (condition-applied) policies grants,
 * followed by ` when <condition>` (grantText) when the statement has a Condition: a condition narrows a grant,
 * so one the table does not name, or one missing, is a different grant.
 */
export function grantsOf(role: Resource): string[] {
  const grants: string[] = [];
  for (const policy of role.Properties.Policies ?? []) {
    for (const s of policy.PolicyDocument.Statement as Statement[]) {
      if (s.Effect !== 'Allow') continue;
      for (const action of [s.Action ?? []].flat())
        for (const resource of [s.Resource].flat()) grants.push(grantText(action, resource, s.Condition));
    }
  }
  return grants.sort();
}

/** One grant as grantsOf writes it. */
export function grantText(action: string, resource: unknown, condition?: unknown): string {
  return `${action} on ${JSON.stringify(resource)}${condition === undefined ? '' : ` when ${JSON.stringify(condition)}`}`;
}

/** ArnLike / StringLike glob (`*` any run, `?` one character) as a RegExp. */
export function globRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
}

/** Fn::Sub text with the pseudo parameters filled in for one account and region. */
export function substitutePseudo(
  text: string,
  values = { 'AWS::Partition': 'aws', 'AWS::Region': 'eu-west-1', 'AWS::AccountId': '123456789012' },
): string {
  return text.replace(/\$\{(AWS::[A-Za-z]+)\}/g, (m, name: keyof typeof values) => values[name] ?? m);
}
