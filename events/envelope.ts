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
export type EventEnvelope<D = Record<string, unknown>> = Omit<z.infer<typeof anyEventEnvelopeSchema>, 'detail'> & { detail: D };

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
 * Parses `raw` (a JSON string or an already-parsed value) with `schema`; throws EventValidationError whose
 * message names every offending field and what was expected. Takes any zod schema, mini or classic.
 */
export function parseEvent<S extends z.core.$ZodType>(schema: S, raw: unknown): z.infer<S> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new EventValidationError([{ path: '(event)', message: `not valid JSON (${(err as Error).message})` }]);
    }
  }
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  throw new EventValidationError(result.error.issues.map((i) => ({ path: pathText(i.path), message: i.message })));
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
