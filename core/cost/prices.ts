/**
 * List prices the cost model multiplies counts by. The defaults live in a dated JSON file beside this module
 * (prices-aws-2026-12.json) that names where each figure comes from; `spiritctl cost --prices FILE` takes
 * the same shape, so a user can put in their region's or their contract's prices.
 */
import * as z from 'zod';

const usd = z.number().nonnegative();

export const regionPricesSchema = z.object({
  lambda: z.object({ requestPerMillion: usd, gbSecond: usd, architecture: z.enum(['arm64', 'x86_64']) }),
  eventBridge: z.object({ customEventPerMillion: usd }),
  dynamodb: z.object({ readRequestUnitPerMillion: usd, writeRequestUnitPerMillion: usd }),
  sqs: z.object({ requestPerMillion: usd }),
  cloudWatch: z.object({ logIngestionPerGb: usd, logStoragePerGbMonth: usd, customMetricPerMonth: usd }),
  /** Kubernetes node capacity, what a pod's requests are priced at. */
  nodeCapacity: z.object({ vcpuHour: usd, gibHour: usd, derivedFrom: z.string() }),
  /** Figures of this region not confirmed by a named source (to check before relying on them). */
  unverified: z.array(z.string()).optional(),
});

export const pricesSchema = z.object({
  currency: z.literal('USD'),
  asOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'asOf must be a date YYYY-MM-DD'),
  sources: z.array(z.object({ what: z.string(), url: z.string(), seen: z.string() })).min(1),
  notes: z.array(z.string()).optional(),
  regions: z.record(z.string(), regionPricesSchema),
});

export type RegionPrices = z.infer<typeof regionPricesSchema>;
export type Prices = z.infer<typeof pricesSchema>;

/** Parses a prices document; a bad field is named with its path (e.g. `regions.us-east-1.lambda.gbSecond`). */
export function parsePrices(doc: unknown): Prices {
  const r = pricesSchema.safeParse(doc);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new Error(`prices: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
}

export function regionPrices(prices: Prices, region: string): RegionPrices {
  const p = prices.regions[region];
  if (!p) throw new Error(`prices: no region "${region}" (have ${Object.keys(prices.regions).join(', ')})`);
  return p;
}
