import { JsonLimitError, MAX_JSON_DEPTH, parseBoundedJson, valueDepthExceeds } from '../shared/bounded-json.ts';
import * as z from '../shared/zod.ts';
import { DEFAULT_EVENT_BUS } from './source.ts';

const nonEmpty = () => z.string().check(z.minLength(1));

/**
 * The envelope EventBridge wraps around every event it delivers to a target. `detailSchema` types `detail`;
 * without it, detail is any JSON object.
 */
export function eventEnvelopeSchema<D extends z.core.$ZodType>(detailSchema: D) {
  return z.object({
    version: nonEmpty(),
    id: nonEmpty(),
    'detail-type': nonEmpty(),
    source: nonEmpty(),
    account: z.string(),
    time: z.iso.datetime({ offset: true }),
    region: z.string(),
    resources: z.array(z.string()),
    detail: detailSchema,
  });
}

export const anyEventEnvelopeSchema = eventEnvelopeSchema(z.record(z.string(), z.unknown()));
export type EventEnvelope<D = Record<string, unknown>> = Omit<z.infer<typeof anyEventEnvelopeSchema>, 'detail'> & {
  detail: D;
};

/** An event that did not fit its schema; `issues` name each field (`detail.clusterId: ...`). */
export class EventValidationError extends Error {
  readonly issues: { path: string; message: string }[];
  constructor(issues: { path: string; message: string }[]) {
    super(`invalid event: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'EventValidationError';
    this.issues = issues;
  }
}

function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(event)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/**
 * Bounds of an event a function takes: 1 MiB (Lambda's asynchronous payload limit; an EventBridge event is
 * at most 256 KiB) and the bus's depth bound plus the envelope's level.
 */
export const MAX_EVENT_BYTES = 1024 * 1024;
export const MAX_EVENT_DEPTH = MAX_JSON_DEPTH + 1;

/**
 * Parses `raw` (a JSON string or an already-parsed value) with `schema`; throws EventValidationError whose
 * message names every offending field and what was expected. Takes any zod schema, mini or classic.
 * Text is size- and depth-checked before it is parsed, a value before it is walked: whatever reads the
 * event after the schema (serialisers, the dead-letter writer, structuredClone) recurses.
 */
export function parseEvent<S extends z.core.$ZodType>(schema: S, raw: unknown): z.infer<S> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      // Depth is judged on the value below, where the path to the deep part can be named; JSON.parse itself
      // is iterative, so only the size bounds what it builds.
      value = parseBoundedJson(raw, { maxDepth: Number.MAX_SAFE_INTEGER, maxBytes: MAX_EVENT_BYTES });
    } catch (err) {
      throw new EventValidationError([
        {
          path: '(event)',
          message:
            err instanceof JsonLimitError && err.kind === 'too-large' ? `is ${err.message}` : (err as Error).message,
        },
      ]);
    }
  }
  if (valueDepthExceeds(value, MAX_EVENT_DEPTH)) {
    throw new EventValidationError([
      {
        path: tooDeepAt(value, MAX_EVENT_DEPTH),
        message: `is nested deeper than ${MAX_EVENT_DEPTH} levels (the limit is ${MAX_EVENT_DEPTH})`,
      },
    ]);
  }
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  throw new EventValidationError(result.error.issues.map((i) => ({ path: pathText(i.path), message: i.message })));
}

/** Shown of the path to a too-deep value: where it starts says which field it is. */
const DEEP_PATH_SHOWN = 6;

/**
 * The path (its first few steps) to the first value nested past `maxDepth`, walked with an explicit stack;
 * only called once valueDepthExceeds said there is one, so a cycle or a huge value is bounded there.
 */
function tooDeepAt(value: unknown, maxDepth: number): string {
  const stack: [unknown, PropertyKey[]][] = [[value, []]];
  let visited = 0;
  while (visited++ < 1_000_000) {
    const top = stack.pop();
    if (top === undefined) break;
    const [v, path] = top;
    if (typeof v !== 'object' || v === null) continue;
    if (path.length + 1 > maxDepth)
      return pathText(path.slice(0, DEEP_PATH_SHOWN)) + (path.length > DEEP_PATH_SHOWN ? '…' : '');
    const entries: [PropertyKey, unknown][] = Array.isArray(v) ? v.map((c, i) => [i, c]) : Object.entries(v);
    for (const [key, child] of entries)
      if (typeof child === 'object' && child !== null) stack.push([child, [...path, key]]);
  }
  return '(event)';
}

/** A PutEvents request entry as the AWS SDK takes it. */
export interface PutEventsEntry {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName?: string;
  Resources?: string[];
  Time?: Date;
}

/**
 * Builds a PutEvents entry after validating `detail` with its schema, so nothing malformed leaves the sender.
 */
export function toPutEventsEntry<S extends z.core.$ZodType>(
  routing: { source: string; detailType: string },
  detailSchema: S,
  detail: z.input<S>,
  options: { eventBusName?: string; resources?: string[]; time?: Date } = {},
): PutEventsEntry {
  const parsed = parseEvent(detailSchema, detail);
  return {
    Source: routing.source,
    DetailType: routing.detailType,
    Detail: JSON.stringify(parsed),
    EventBusName: options.eventBusName ?? DEFAULT_EVENT_BUS,
    ...(options.resources ? { Resources: options.resources } : {}),
    ...(options.time ? { Time: options.time } : {}),
  };
}
