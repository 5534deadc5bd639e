/**
 * dynalite parses every expression of every request with PEG parsers, and the state table's lease condition
 * took ~500 µs to parse, its release condition ~180 µs and the two update expressions ~90–140 µs: together
 * about 4% of the local fleet's CPU while it converges (dev/bench/HISTORY.md, former decision 0035). The
 * functions send the same few expressions over and over with new values, so this remembers each parse and
 * hands the next request with the same expression a copy with that request's own values put in.
 *
 * Why a parse can be reused: an expression has no literals, only `#name` and `:value` placeholders, and the
 * parsers read a value only for its type (getType/getImmediateType in dynalite/db/*Parser.js) except in
 * `attribute_type` (which reads the type name it is given) and `BETWEEN` (which compares its bounds). So a
 * parse is remembered under the expression, the names its `#` placeholders stand for and the types of its
 * `:` values, and never for an expression with `attribute_type` or `BETWEEN`. Only a parse that succeeded is
 * remembered: a request whose expression fails gets the parser's own message, every time. A parse in which
 * a value does not appear as itself (so cannot be put back) is not remembered either.
 */
import { createRequire } from 'node:module';

type AttributeValue = Record<string, unknown>;

/** What dynalite's validation hands its parsers (dynalite/validations/index.js, `parse`). */
export interface ExpressionParseContext {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, AttributeValue>;
  unusedAttrNames?: Record<string, boolean>;
  unusedAttrVals?: Record<string, boolean>;
}

export interface ExpressionParser {
  parse(input: string, options: { context: ExpressionParseContext }): unknown;
}

const PLACEHOLDER = /[#:][0-9a-zA-Z_]+/g;
/** Expressions whose parse depends on a value's content, not only on its type. */
const READS_VALUE_CONTENT = /attribute_type|between/i;
/** dynalite's own order (getImmediateType): a value's type is the first of these it has. */
const VALUE_TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'];
/** Distinct expressions remembered; the state table's functions send fewer than twenty. */
const CACHE_LIMIT = 500;

/** Where a request's value goes in a remembered parse. */
class ValueSlot {
  readonly placeholder: string;
  constructor(placeholder: string) {
    this.placeholder = placeholder;
  }
}

function valueType(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as AttributeValue;
  return VALUE_TYPES.find((t) => v[t] != null) ?? null;
}

const unique = (xs: string[]) => [...new Set(xs)];

/** A copy of a parse tree (its prototypes kept) with each node `swap` answers for replaced by that answer. */
function copyTree(node: unknown, swap: (node: object) => unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  const swapped = swap(node);
  if (swapped !== undefined) return swapped;
  if (Array.isArray(node)) return node.map((item) => copyTree(item, swap));
  const out = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>;
  for (const [k, v] of Object.entries(node)) out[k] = copyTree(v, swap);
  return out;
}

/** A copy of `node` with every value of `slots` (by identity) replaced by its slot. */
function toTemplate(node: unknown, slots: Map<object, ValueSlot>, found: Set<string>): unknown {
  return copyTree(node, (n) => {
    const slot = slots.get(n);
    if (slot) found.add(slot.placeholder);
    return slot;
  });
}

/** A fresh copy of a template with this request's values in its slots. */
function fromTemplate(node: unknown, values: Record<string, AttributeValue>): unknown {
  return copyTree(node, (n) => (n instanceof ValueSlot ? values[n.placeholder] : undefined));
}

/** `parser` with its successful parses remembered as described above. */
export function rememberingParser(parser: ExpressionParser): ExpressionParser & { readonly hits: number } {
  const templates = new Map<string, unknown>();
  let hits = 0;
  return {
    get hits() {
      return hits;
    },
    parse(input, options) {
      const ctx = options.context;
      if (READS_VALUE_CONTENT.test(input)) return parser.parse(input, options);
      const placeholders = unique(input.match(PLACEHOLDER) ?? []);
      const names = placeholders.filter((p) => p.startsWith('#'));
      const values = placeholders.filter((p) => p.startsWith(':'));
      const attrVals = ctx.attrVals ?? {};
      const key = JSON.stringify([
        input,
        names.map((n) => ctx.attrNames?.[n] ?? null),
        values.map((v) => valueType(attrVals[v])),
      ]);
      const template = templates.get(key);
      if (template !== undefined) {
        hits++;
        // What the parser itself does to the context: every placeholder it resolves counts as used.
        for (const n of names) delete ctx.unusedAttrNames?.[n];
        for (const v of values) delete ctx.unusedAttrVals?.[v];
        return fromTemplate(template, attrVals);
      }
      const result = parser.parse(input, options);
      if (result === null || typeof result !== 'object') return result;
      if (values.some((v) => valueType(attrVals[v]) === null)) return result;
      const slots = new Map<object, ValueSlot>(values.map((v) => [attrVals[v]!, new ValueSlot(v)]));
      const found = new Set<string>();
      const made = toTemplate(result, slots, found);
      if (found.size === values.length) {
        if (templates.size >= CACHE_LIMIT) templates.delete(templates.keys().next().value!);
        templates.set(key, made);
      }
      return result;
    },
  };
}

const INSTALLED = Symbol.for('pool-spirit.dynalite-expressions');

/**
 * Makes this process's dynalite remember its parses (once; later calls find the same parsers). Returns how
 * many parses have been answered from memory so far, across dynalite's three parsers.
 */
export function rememberDynaliteParses(): () => number {
  const require = createRequire(import.meta.url);
  const installed: Array<{ readonly hits: number }> = [];
  for (const name of ['conditionParser', 'updateParser', 'projectionParser']) {
    // dynalite's validation calls `parser.parse` on these very module objects at every request.
    const mod = require(`dynalite/db/${name}`) as ExpressionParser & { [INSTALLED]?: { readonly hits: number } };
    if (typeof mod.parse !== 'function') continue;
    if (!mod[INSTALLED]) {
      const remembering = rememberingParser({ parse: mod.parse.bind(mod) });
      mod.parse = (input, options) => remembering.parse(input, options);
      mod[INSTALLED] = remembering;
    }
    installed.push(mod[INSTALLED]);
  }
  return () => installed.reduce((n, p) => n + p.hits, 0);
}
