/**
 * AWS's published default quotas the scale model holds the fleet against, each with where it is published.
 * Per account and region unless said otherwise; most can be raised on request (`adjustable`).
 */
export interface Quota {
  value: number;
  unit: string;
  adjustable: boolean;
  source: string;
}

const EVENTBRIDGE = 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html';
const LAMBDA_LIMITS = 'https://docs.aws.amazon.com/lambda/latest/dg/limits.html';
const LAMBDA_SCALING = 'https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html';
const DDB_PARTITIONS =
  'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html';

export const QUOTAS = {
  /** us-east-1, us-west-2 (and, by the same table, eu-west-1); us-east-2 and most others 2,400. */
  putEventsPerSecond: {
    value: 10_000,
    unit: 'PutEvents requests/s',
    adjustable: true,
    source: `${EVENTBRIDGE} (PutEvents throttle limit: us-east-1 10,000/s, us-east-2 2,400/s)`,
  },
  /** An invocation is one event matched to one rule target; over it, deliveries are delayed, not lost. */
  eventBridgeInvocationsPerSecond: {
    value: 18_750,
    unit: 'invocations/s',
    adjustable: true,
    source: `${EVENTBRIDGE} (Invocations throttle limit: us-east-1 and eu-west-1 18,750/s, eu-central-1 4,500/s, others 1,100-2,250/s)`,
  },
  eventBusPolicyCharacters: {
    value: 10_240,
    unit: 'characters',
    adjustable: true,
    source: `${EVENTBRIDGE} (Event bus policy size; grows with each account granted)`,
  },
  lambdaConcurrentExecutions: {
    value: 1_000,
    unit: 'concurrent executions',
    adjustable: true,
    source: `${LAMBDA_LIMITS} (Concurrent executions, default 1,000 per Region)`,
  },
  lambdaScalingRate: {
    value: 1_000,
    unit: 'new execution environments per 10 s per function',
    adjustable: false,
    source: `${LAMBDA_SCALING} (concurrency scaling rate)`,
  },
  dynamoPartitionWriteUnitsPerSecond: {
    value: 1_000,
    unit: 'write units/s per partition',
    adjustable: false,
    source: `${DDB_PARTITIONS} (each partition: 1,000 write units/s, 3,000 read units/s)`,
  },
  dynamoPartitionReadUnitsPerSecond: {
    value: 3_000,
    unit: 'read units/s per partition',
    adjustable: false,
    source: `${DDB_PARTITIONS}`,
  },
  dynamoItemBytes: {
    value: 400 * 1024,
    unit: 'bytes per item',
    adjustable: false,
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html (item size 400 KB)',
  },
} satisfies Record<string, Quota>;
