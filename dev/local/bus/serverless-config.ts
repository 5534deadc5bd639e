import { parse, type Tags } from 'yaml';

/**
 * Just enough of Serverless Framework v3 (osls) configuration handling to read routing out of
 * serverless.yml locally: CloudFormation short-form tags, `${...}` variables (self, sls, opt, env, param,
 * aws, with fallbacks) and the CloudFormation references (`!Ref`, `!GetAtt`) that name buses and queues.
 */

const CFN_FUNCTIONS = [
  'Ref',
  'GetAtt',
  'Sub',
  'Join',
  'Select',
  'Split',
  'If',
  'Equals',
  'Not',
  'And',
  'Or',
  'FindInMap',
  'ImportValue',
  'Base64',
  'GetAZs',
  'Cidr',
  'Condition',
];

const cfnTags: Tags = CFN_FUNCTIONS.flatMap((name) => {
  const key = name === 'Ref' || name === 'Condition' ? name : `Fn::${name}`;
  return [
    { tag: `!${name}`, resolve: (s: string) => ({ [key]: name === 'GetAtt' ? s.split('.') : s }) },
    { tag: `!${name}`, collection: 'seq' as const, resolve: (seq: { toJSON(): unknown }) => ({ [key]: seq.toJSON() }) },
    { tag: `!${name}`, collection: 'map' as const, resolve: (map: { toJSON(): unknown }) => ({ [key]: map.toJSON() }) },
  ];
}) as Tags;

export function parseServerlessYaml(text: string): Record<string, unknown> {
  const doc = parse(text, { customTags: cfnTags });
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error('serverless.yml must be a YAML mapping');
  return doc as Record<string, unknown>;
}

export interface ResolveOptions {
  /** `--stage`; default provider.stage's own fallback, then `dev`. */
  stage?: string;
  region?: string;
  accountId?: string;
  env?: Record<string, string | undefined>;
}

export class UnresolvedVariableError extends Error {
  constructor(variable: string, reason: string) {
    super(`cannot resolve ${variable}: ${reason}`);
    this.name = 'UnresolvedVariableError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Resolves `${...}` variables inside values taken from one serverless.yml document. */
export class VariableResolver {
  readonly root: Record<string, unknown>;
  readonly stage: string;
  readonly region: string;
  readonly accountId: string;
  #opts: ResolveOptions;
  #depth = 0;

  constructor(root: Record<string, unknown>, opts: ResolveOptions = {}) {
    this.root = root;
    this.#opts = opts;
    this.stage = opts.stage ?? this.#stringOr(this.#self('provider.stage'), 'dev');
    this.region = opts.region ?? this.#stringOr(this.#self('provider.region'), 'us-east-1');
    this.accountId = opts.accountId ?? '000000000000';
  }

  #stringOr(value: unknown, fallback: string): string {
    try {
      const resolved = this.resolve(value);
      return typeof resolved === 'string' && resolved ? resolved : fallback;
    } catch {
      return fallback;
    }
  }

  #self(path: string): unknown {
    let value: unknown = this.root;
    for (const key of path.split('.'))
      value = isObject(value) ? value[key] : Array.isArray(value) ? value[Number(key)] : undefined;
    return value;
  }

  /** Deeply resolves variables in `value`. */
  resolve(value: unknown): unknown {
    if (this.#depth > 50) throw new UnresolvedVariableError('variable', 'references nest more than 50 deep (a cycle?)');
    this.#depth++;
    try {
      if (typeof value === 'string') return this.#resolveString(value);
      if (Array.isArray(value)) return value.map((v) => this.resolve(v));
      if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolve(v)]));
      return value;
    } finally {
      this.#depth--;
    }
  }

  #resolveString(text: string): unknown {
    const spans = variableSpans(text);
    if (spans.length === 0) return text;
    // A string that is exactly one variable takes the variable's value and type (object, list, number...).
    if (spans.length === 1 && spans[0].start === 0 && spans[0].end === text.length) return this.#resolveVariable(text);
    let out = '';
    let last = 0;
    for (const { start, end } of spans) {
      const value = this.#resolveVariable(text.slice(start, end));
      if (isObject(value) || Array.isArray(value)) {
        throw new UnresolvedVariableError(text.slice(start, end), 'resolves to an object or list inside a string');
      }
      out += text.slice(last, start) + String(value);
      last = end;
    }
    return out + text.slice(last);
  }

  #resolveVariable(variable: string): unknown {
    const inner = variable.slice(2, -1);
    const candidates = splitTopLevel(inner);
    for (const candidate of candidates) {
      const value = this.#resolveCandidate(candidate.trim(), variable);
      if (value !== undefined && value !== null) return value;
    }
    throw new UnresolvedVariableError(variable, 'no source provides a value and there is no fallback');
  }

  #resolveCandidate(c: string, variable: string): unknown {
    if (/^'.*'$/s.test(c) || /^".*"$/s.test(c)) return c.slice(1, -1);
    if (/^-?\d+(\.\d+)?$/.test(c)) return Number(c);
    if (c === 'true' || c === 'false') return c === 'true';
    if (c.startsWith('${')) return this.resolve(c);
    const m = /^([a-zA-Z]+):(.*)$/s.exec(c);
    if (!m) throw new UnresolvedVariableError(variable, `"${c}" is not a variable source`);
    const [, source, address] = m;
    switch (source) {
      case 'self':
        return this.resolve(this.#self(address));
      case 'sls':
        if (address === 'stage') return this.stage;
        if (address === 'instanceId') return 'local';
        break;
      case 'opt':
        if (address === 'stage') return this.#opts.stage;
        if (address === 'region') return this.#opts.region;
        return undefined;
      case 'env':
        return (this.#opts.env ?? process.env)[address];
      case 'param': {
        const params = this.root.params;
        const forStage =
          isObject(params) && isObject(params[this.stage])
            ? (params[this.stage] as Record<string, unknown>)[address]
            : undefined;
        const byDefault =
          isObject(params) && isObject(params.default)
            ? (params.default as Record<string, unknown>)[address]
            : undefined;
        return this.resolve(forStage ?? byDefault);
      }
      case 'aws':
        if (address === 'region') return this.region;
        if (address === 'accountId') return this.accountId;
        if (address === 'partition') return 'aws';
        break;
    }
    throw new UnresolvedVariableError(variable, `source "${source}:${address}" is not available locally`);
  }

  /**
   * A CloudFormation reference to one of the stack's own resources (`!Ref X`, `!GetAtt X.Name|Arn|QueueName`)
   * turned into the name or ARN it would have. Strings pass through; anything else gives undefined.
   */
  cfnValue(value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    if (!isObject(value)) return undefined;
    const resources = this.#self('resources.Resources');
    const resourceOf = (id: unknown) =>
      typeof id === 'string' && isObject(resources) && isObject(resources[id])
        ? (resources[id] as Record<string, unknown>)
        : undefined;
    const ref = value.Ref;
    const getAtt = value['Fn::GetAtt'];
    const [id, attribute] = Array.isArray(getAtt)
      ? getAtt
      : typeof ref === 'string'
        ? [ref, 'Ref']
        : [undefined, undefined];
    const resource = resourceOf(id);
    if (!resource) return undefined;
    const props = isObject(resource.Properties) ? (this.resolve(resource.Properties) as Record<string, unknown>) : {};
    const name =
      (typeof props.Name === 'string' && props.Name) ||
      (typeof props.QueueName === 'string' && props.QueueName) ||
      String(id);
    switch (resource.Type) {
      case 'AWS::Events::EventBus':
        return attribute === 'Arn' ? `arn:aws:events:${this.region}:${this.accountId}:event-bus/${name}` : name;
      case 'AWS::SQS::Queue':
        if (attribute === 'Arn') return `arn:aws:sqs:${this.region}:${this.accountId}:${name}`;
        if (attribute === 'Ref') return `https://sqs.${this.region}.amazonaws.com/${this.accountId}/${name}`;
        return name;
      default:
        return attribute === 'Ref' ? name : `${name}.${String(attribute)}`;
    }
  }
}

/** Outermost `${...}` spans of a string, with nested `${...}` inside them. */
function variableSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (let i = text.indexOf('${'); i >= 0; i = text.indexOf('${', i)) {
    let depth = 0;
    let j = i;
    for (; j < text.length; j++) {
      if (text.startsWith('${', j)) {
        depth++;
        j++;
      } else if (text[j] === '}') {
        depth--;
        if (depth === 0) break;
      }
    }
    if (depth !== 0) throw new UnresolvedVariableError(text, 'unterminated ${');
    spans.push({ start: i, end: j + 1 });
    i = j + 1;
  }
  return spans;
}

/** Splits `a, 'b, c', ${d, e}` on the commas that are not inside quotes or a nested variable. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (text.startsWith('${', i)) depth++;
    else if (ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  parts.push(current);
  return parts;
}
