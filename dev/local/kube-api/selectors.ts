/**
 * Label and field selectors with kube-apiserver's grammar, validation and error messages
 * (k8s.io/apimachinery/pkg/labels/selector.go, pkg/fields/selector.go and the per-kind field label
 * conversions). The server turns a SelectorError into a 400 BadRequest carrying its message.
 */

import type { Event, Namespace, Node, Pod, ReplicationController, Secret, Service } from 'kubernetes-types/core/v1.js';
import { isKubernetesApiGroup } from './api-groups.ts';
import type { ApiObject, JsonObject } from './api-object.ts';
import { invalidValue, isQualifiedName, isValidLabelValue } from './validation/messages.ts';

export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** Sorted and de-duplicated, like kube's sets.String. */
  values: string[];
}

export interface LabelSelector {
  /** ANDed; sorted by key like kube's parser. Empty = everything. */
  requirements: LabelRequirement[];
}

// ---------------------------------------------------------------------------------------------------
// Label selector lexer and parser: a transcription of kube's, so that the same inputs fail the same way.

type Tok =
  | 'error'
  | 'eos'
  | 'closedPar'
  | 'comma'
  | 'notExists'
  | 'doubleEquals'
  | 'equals'
  | 'gt'
  | 'identifier'
  | 'in'
  | 'lt'
  | 'notEquals'
  | 'notin'
  | 'openPar';

const literalTokens: Record<string, Tok> = {
  ')': 'closedPar',
  ',': 'comma',
  '!': 'notExists',
  '==': 'doubleEquals',
  '=': 'equals',
  '>': 'gt',
  in: 'in',
  '<': 'lt',
  '!=': 'notEquals',
  notin: 'notin',
  '(': 'openPar',
};

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string) => '=!(),><'.includes(ch) && ch !== '';

function lex(input: string): Array<{ tok: Tok; lit: string }> {
  const items: Array<{ tok: Tok; lit: string }> = [];
  let pos = 0;
  for (;;) {
    while (pos < input.length && isWhitespace(input.charAt(pos))) pos++;
    if (pos >= input.length) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    if (isSpecial(input.charAt(pos))) {
      // Longest special-symbol run that still forms a token ("!=" before "!").
      let buffer = '';
      let last: { tok: Tok; lit: string } | undefined;
      while (pos < input.length && isSpecial(input.charAt(pos))) {
        buffer += input.charAt(pos);
        const tok = literalTokens[buffer];
        if (tok) {
          last = { tok, lit: buffer };
          pos++;
        } else if (last) {
          break;
        } else {
          pos++;
        }
      }
      items.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let buffer = '';
    while (pos < input.length && !isSpecial(input.charAt(pos)) && !isWhitespace(input.charAt(pos)))
      buffer += input.charAt(pos++);
    items.push({ tok: literalTokens[buffer] ?? 'identifier', lit: buffer });
  }
}

class LabelParser {
  private readonly items: Array<{ tok: Tok; lit: string }>;
  private position = 0;

  constructor(input: string) {
    this.items = lex(input);
  }

  /** In value context `in` and `notin` are plain identifiers (`x in (in)`). */
  private lookahead(valueContext: boolean): [Tok, string] {
    const item = this.items[this.position];
    if (!item) throw new Error('label selector parser read past the end of its tokens');
    const { tok, lit } = item;
    return [valueContext && (tok === 'in' || tok === 'notin') ? 'identifier' : tok, lit];
  }

  private consume(valueContext: boolean): [Tok, string] {
    const r = this.lookahead(valueContext);
    this.position++;
    return r;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const [tok, lit] = this.lookahead(true);
      if (tok === 'identifier' || tok === 'notExists') {
        try {
          requirements.push(this.parseRequirement());
        } catch (err) {
          throw new SelectorError(`unable to parse requirement: ${(err as Error).message}`);
        }
        const [t, l] = this.consume(true);
        if (t === 'eos') return requirements;
        if (t === 'comma') {
          const [t2, l2] = this.lookahead(true);
          if (t2 !== 'identifier' && t2 !== 'notExists')
            throw new SelectorError(`found '${l2}', expected: identifier after ','`);
        } else {
          throw new SelectorError(`found '${l}', expected: ',' or 'end of string'`);
        }
      } else if (tok === 'eos') {
        return requirements;
      } else {
        throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    let operator: LabelOperator | undefined;
    let [tok, key] = this.consume(true);
    if (tok === 'notExists') {
      operator = '!';
      [tok, key] = this.consume(true);
    }
    if (tok !== 'identifier') throw new Error(`found '${key}', expected: identifier`);
    // kube validates the key here with a nil field path, hence the literal "<nil>" in its message.
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new Error(invalidValue('<nil>', key, keyErrs.join('; ')));
    const [next] = this.lookahead(true);
    if (next === 'eos' || next === 'comma') return { key, operator: operator ?? 'exists', values: [] };
    // `!key=value`: the requirement ends at the key and the caller rejects the `=` that follows.
    if (operator === '!') return { key, operator, values: [] };
    operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    return makeRequirement(key, operator, values);
  }

  private parseOperator(): LabelOperator {
    const [tok, lit] = this.consume(false);
    const ops: Partial<Record<Tok, LabelOperator>> = {
      in: 'in',
      equals: '=',
      doubleEquals: '==',
      gt: 'gt',
      lt: 'lt',
      notin: 'notin',
      notEquals: '!=',
    };
    const op = ops[tok];
    if (!op) throw new Error(`found '${lit}', expected: '=', '!=', '==', 'in', notin'`);
    return op;
  }

  private parseValues(): Set<string> {
    let [tok, lit] = this.consume(true);
    if (tok !== 'openPar') throw new Error(`found '${lit}' expected: '('`);
    [tok, lit] = this.lookahead(true);
    if (tok === 'identifier' || tok === 'comma') {
      const s = this.parseIdentifiersList();
      if (this.consume(true)[0] !== 'closedPar') throw new Error(`found '${lit}', expected: ')'`);
      return s;
    }
    if (tok === 'closedPar') {
      this.consume(true);
      return new Set(['']);
    }
    throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const [tok, lit] = this.consume(true);
      if (tok === 'identifier') {
        s.add(lit);
        const [tok2, lit2] = this.lookahead(true);
        if (tok2 === 'comma') continue;
        if (tok2 === 'closedPar') return s;
        throw new Error(`found '${lit2}', expected: ',' or ')'`);
      } else if (tok === 'comma') {
        // Empty members are the empty-string value: "(,a)", "(a,)", "(a,,b)".
        if (s.size === 0) s.add('');
        const [tok2] = this.lookahead(true);
        if (tok2 === 'closedPar') {
          s.add('');
          return s;
        }
        if (tok2 === 'comma') {
          this.consume(true);
          s.add('');
        }
      } else {
        throw new Error(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const [ahead] = this.lookahead(true);
    if (ahead === 'eos' || ahead === 'comma') return new Set(['']);
    const [tok, lit] = this.consume(true);
    if (tok === 'identifier') return new Set([lit]);
    throw new Error(`found '${lit}', expected: identifier`);
  }
}

function makeRequirement(key: string, operator: LabelOperator, valueSet: Set<string>): LabelRequirement {
  const values = [...valueSet].sort();
  const errs: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (!/^[+-]?\d+$/.test(v))
        errs.push(invalidValue(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
    });
  }
  values.forEach((v, i) => {
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length) errs.push(invalidValue(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  // kube aggregates several field errors as "[a, b]" and shows a single one bare.
  if (errs.length === 1) throw new Error(errs[0]);
  if (errs.length > 1) throw new Error(`[${errs.join(', ')}]`);
  return { key, operator, values };
}

/** Parses a `labelSelector` query parameter. Throws SelectorError with kube's message. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new LabelParser(text).parse();
  requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { requirements };
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(value as string);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(value as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      const [bound] = r.values;
      if (!has || !/^[+-]?\d+$/.test(value as string) || r.values.length !== 1 || bound === undefined) return false;
      const lhs = BigInt(value as string);
      const rhs = BigInt(bound);
      return r.operator === 'gt' ? lhs > rhs : lhs < rhs;
    }
  }
}

export function matchLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return sel.requirements.every((r) => requirementMatches(r, l));
}

/** kube's selector String(): canonical text, values sorted. */
export function labelSelectorToString(sel: LabelSelector): string {
  return sel.requirements
    .map((r) => {
      const vals = r.values.join(',');
      switch (r.operator) {
        case 'exists':
          return r.key;
        case '!':
          return `!${r.key}`;
        case 'in':
          return `${r.key} in (${vals})`;
        case 'notin':
          return `${r.key} notin (${vals})`;
        case 'gt':
          return `${r.key}>${vals}`;
        case 'lt':
          return `${r.key}<${vals}`;
        default:
          return `${r.key}${r.operator}${vals}`;
      }
    })
    .join(',');
}

/** A metav1.LabelSelector as used in Deployment/Service specs (`matchLabels` + `matchExpressions`). */
export interface MetaLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/**
 * metav1.LabelSelectorAsSelector: `undefined` selects nothing (returns undefined), `{}` selects everything.
 * Throws SelectorError on an unknown operator or invalid key/value.
 */
export function labelSelectorFromMeta(ls: MetaLabelSelector | undefined | null): LabelSelector | undefined {
  if (ls == null) return undefined;
  const reqs: LabelRequirement[] = [];
  const ops: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };
  for (const [k, v] of Object.entries(ls.matchLabels ?? {})) {
    reqs.push(checked(k, '=', new Set([v])));
  }
  for (const expr of ls.matchExpressions ?? []) {
    const op = ops[expr.operator];
    if (!op) throw new SelectorError(`"${expr.operator}" is not a valid label selector operator`);
    reqs.push(checked(expr.key, op, new Set(expr.values ?? [])));
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { requirements: reqs };
}

function checked(key: string, op: LabelOperator, values: Set<string>): LabelRequirement {
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) throw new SelectorError(invalidValue('key', key, keyErrs.join('; ')));
  if ((op === 'exists' || op === '!') && values.size) {
    throw new SelectorError('values: Invalid value: values set must be empty for exists and does not exist');
  }
  if ((op === 'in' || op === 'notin') && values.size === 0) {
    throw new SelectorError("values: Invalid value: for 'in', 'notin' operators, values set can't be empty");
  }
  try {
    return makeRequirement(key, op, values);
  } catch (err) {
    throw new SelectorError((err as Error).message);
  }
}

// ---------------------------------------------------------------------------------------------------
// Field selectors.

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface FieldSelector {
  requirements: FieldRequirement[];
  /** The value kube would compare for `field` on `obj` ('' when absent). */
  fieldValue(obj: object, field: string): string;
}

type FieldGetter = (obj: object) => string;

const str = (v: unknown): string => (v == null ? '' : String(v));

const metaFields = {
  'metadata.name': (o) => str((o as ApiObject).metadata?.name),
  'metadata.namespace': (o) => str((o as ApiObject).metadata?.namespace),
} satisfies Record<string, FieldGetter>;

/**
 * Per built-in resource: the fields kube's field label conversion accepts. Resources listed with `null`
 * have no conversion of their own and fall back to kube's default (metadata.name/namespace only, with a
 * different error message).
 */
const builtinFields: Record<string, Record<string, FieldGetter> | null> = {
  pods: {
    ...metaFields,
    'spec.nodeName': (o) => str((o as Pod).spec?.nodeName),
    'spec.restartPolicy': (o) => str((o as Pod).spec?.restartPolicy),
    'spec.schedulerName': (o) => str((o as Pod).spec?.schedulerName),
    'spec.serviceAccountName': (o) => str((o as Pod).spec?.serviceAccountName),
    'spec.hostNetwork': (o) => String((o as Pod).spec?.hostNetwork === true),
    'status.phase': (o) => str((o as Pod).status?.phase),
    'status.podIP': (o) => str((o as Pod).status?.podIPs?.[0]?.ip ?? (o as Pod).status?.podIP),
    'status.podIPs': (o) => str((o as Pod).status?.podIPs?.[0]?.ip ?? (o as Pod).status?.podIP),
    'status.nominatedNodeName': (o) => str((o as Pod).status?.nominatedNodeName),
  },
  nodes: {
    'metadata.name': metaFields['metadata.name'],
    'spec.unschedulable': (o) => String((o as Node).spec?.unschedulable === true),
  },
  namespaces: {
    'metadata.name': metaFields['metadata.name'],
    'status.phase': (o) => str((o as Namespace).status?.phase),
  },
  secrets: { ...metaFields, type: (o) => str((o as Secret).type) },
  services: {
    ...metaFields,
    'spec.clusterIP': (o) => str((o as Service).spec?.clusterIP),
    'spec.type': (o) => str((o as Service).spec?.type),
  },
  events: {
    ...metaFields,
    'involvedObject.kind': (o) => str((o as Event).involvedObject?.kind),
    'involvedObject.namespace': (o) => str((o as Event).involvedObject?.namespace),
    'involvedObject.name': (o) => str((o as Event).involvedObject?.name),
    'involvedObject.uid': (o) => str((o as Event).involvedObject?.uid),
    'involvedObject.apiVersion': (o) => str((o as Event).involvedObject?.apiVersion),
    'involvedObject.resourceVersion': (o) => str((o as Event).involvedObject?.resourceVersion),
    'involvedObject.fieldPath': (o) => str((o as Event).involvedObject?.fieldPath),
    reason: (o) => str((o as Event).reason),
    reportingComponent: (o) => str((o as Event).reportingComponent),
    source: (o) => str((o as Event).source?.component),
    type: (o) => str((o as Event).type),
  },
  replicationcontrollers: {
    ...metaFields,
    'status.replicas': (o) => str((o as ReplicationController).status?.replicas ?? 0),
  },
  configmaps: null,
  serviceaccounts: null,
  endpoints: null,
  limitranges: null,
  resourcequotas: null,
  persistentvolumes: null,
  persistentvolumeclaims: null,
  podtemplates: null,
  deployments: null,
  replicasets: null,
  statefulsets: null,
  daemonsets: null,
  controllerrevisions: null,
  roles: null,
  rolebindings: null,
  clusterroles: null,
  clusterrolebindings: null,
  leases: null,
  customresourcedefinitions: null,
};

/** kube renames this one for old clients. */
const fieldAliases: Record<string, Record<string, string>> = { pods: { 'spec.host': 'spec.nodeName' } };

export interface FieldSelectorOptions {
  /** For custom resources: whether the resource is namespaced (cluster-scoped ones reject metadata.namespace). */
  namespaced?: boolean;
  /** For custom resources: the CRD version's `selectableFields[].jsonPath` (e.g. `.spec.color`). */
  selectableFields?: string[];
}

function splitUnescaped(text: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === sep) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      const next = s[i + 1];
      if (next === undefined) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
      if (next !== '\\' && next !== ',' && next !== '=') {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${next}`);
      }
      out += next;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c}`);
    } else {
      out += c;
    }
  }
  return out;
}

/** `pods`, `pods.` or `deployments.apps` → plural resource name; kube's per-kind rules key on it. */
function resourceName(resource: string): string {
  const dot = resource.indexOf('.');
  return dot < 0 ? resource : resource.slice(0, dot);
}

function fieldTable(
  resource: string,
  opts: FieldSelectorOptions,
): { fields: Record<string, FieldGetter>; reject: (f: string) => string } {
  const plural = resourceName(resource);
  const isBuiltin = Object.hasOwn(builtinFields, plural) && (resource === plural || isBuiltinGroup(resource));
  if (isBuiltin) {
    const own = builtinFields[plural];
    if (own) return { fields: own, reject: (f) => `field label not supported: ${f}` };
    return {
      fields: metaFields,
      reject: (f) => `${JSON.stringify(f)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
    };
  }
  // Custom resources: apiextensions' converter.
  const fields: Record<string, FieldGetter> = { 'metadata.name': metaFields['metadata.name'] };
  if (opts.namespaced !== false) fields['metadata.namespace'] = metaFields['metadata.namespace'];
  for (const jsonPath of opts.selectableFields ?? []) {
    const path = jsonPath.replace(/^\./, '');
    fields[path] = (o) => {
      const v = path.split('.').reduce<unknown>((acc, k) => (acc == null ? undefined : (acc as JsonObject)[k]), o);
      return v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    };
  }
  return { fields, reject: (f) => `field label not supported: ${f}` };
}

function isBuiltinGroup(resource: string): boolean {
  return isKubernetesApiGroup(resource.includes('.') ? resource.slice(resource.indexOf('.') + 1) : '');
}

/**
 * Parses a `fieldSelector` query parameter for `resource` (plural name, optionally `plural.group`).
 * Unknown resources are treated as custom resources. Throws SelectorError with kube's message.
 */
export function parseFieldSelector(text: string, resource: string, opts: FieldSelectorOptions = {}): FieldSelector {
  const { fields, reject } = fieldTable(resource, opts);
  // Like kube: the whole text parses first, then each field goes through the resource's conversion.
  const parsed: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',').sort()) {
    if (term === '') continue;
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!m) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`);
    const [, lhs = '', op, rhs = ''] = m; // every group takes part in a match
    parsed.push({ field: lhs, operator: op === '!=' ? '!=' : '=', value: unescapeFieldValue(rhs) });
  }
  const aliases = fieldAliases[resourceName(resource)] ?? {};
  const requirements = parsed.map((r) => {
    const field = aliases[r.field] ?? r.field;
    if (!Object.hasOwn(fields, field)) throw new SelectorError(reject(r.field));
    return { ...r, field };
  });
  return { requirements, fieldValue: (obj, field) => (fields[field] ? fields[field](obj) : '') };
}

export function matchFields(sel: FieldSelector, obj: object): boolean {
  return sel.requirements.every((r) => {
    const actual = sel.fieldValue(obj, r.field);
    return r.operator === '=' ? actual === r.value : actual !== r.value;
  });
}
