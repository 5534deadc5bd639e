/**
 * From what a handler's bundle references in the AWS SDK to the IAM actions it needs. Anything this does
 * not know (a new service, a transaction, a paginator, an aggregated client whose calls are method names)
 * is reported as unmapped, so the permission check fails until someone decides what it needs.
 */
import type { SdkBinding, SdkUsage } from '../../../scripts/bundle-functions.ts';

/** IAM service prefix of each SDK client package whose `<Operation>Command` classes map 1:1 to actions. */
const CLIENT_SERVICE: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/client-eventbridge': 'events',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-sts': 'sts',
};

/** The document client's commands, named after but not equal to the DynamoDB operations. */
const DOCUMENT_CLIENT_COMMANDS: Record<string, string> = {
  GetCommand: 'dynamodb:GetItem',
  PutCommand: 'dynamodb:PutItem',
  UpdateCommand: 'dynamodb:UpdateItem',
  DeleteCommand: 'dynamodb:DeleteItem',
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
  BatchGetCommand: 'dynamodb:BatchGetItem',
  BatchWriteCommand: 'dynamodb:BatchWriteItem',
  // TransactGet/TransactWrite need the per-item actions they carry: left unmapped on purpose.
};

/**
 * Packages a handler may import that make no AWS API call of their own (logging, EMF metrics, parsing,
 * request signing building blocks). Any other AWS-related package is flagged for review.
 */
export const NON_CALLING_AWS_PACKAGES = new Set([
  '@aws-lambda-powertools/logger',
  '@aws-lambda-powertools/metrics',
  '@aws-lambda-powertools/parser',
  '@aws-lambda-powertools/commons',
  '@aws-crypto/sha256-js',
  '@smithy/protocol-http',
  '@smithy/signature-v4',
  '@smithy/types',
]);

export interface RequiredActions {
  actions: string[];
  /** SDK exports or packages whose needs are unknown here, each with why. */
  unmapped: string[];
}

function actionOf(b: SdkBinding): string | undefined | null {
  if (b.module === '@aws-sdk/lib-dynamodb') {
    if (b.name === 'DynamoDBDocumentClient') return null;
    return DOCUMENT_CLIENT_COMMANDS[b.name];
  }
  const service = CLIENT_SERVICE[b.module];
  if (!service) return undefined;
  // Clients only hold configuration; exceptions are classes to compare errors against.
  if (/Client$|Exception$|Error$/.test(b.name)) return null;
  const op = b.name.match(/^([A-Z][A-Za-z0-9]+)Command$/)?.[1];
  return op ? `${service}:${op}` : undefined;
}

const packageRoot = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

export function requiredActions(usage: SdkUsage): RequiredActions {
  const actions = new Set<string>();
  const unmapped: string[] = [...usage.opaque.map((o) => `${o}: cannot tell which operations it calls`)];
  for (const b of usage.bindings) {
    const action = actionOf(b);
    if (action === undefined)
      unmapped.push(
        `${b.module} ${b.name}: no IAM action known for it (map it in test/functions/common/sdk-actions.ts)`,
      );
    else if (action !== null) actions.add(action);
  }
  for (const spec of usage.packages) {
    const pkg = packageRoot(spec);
    if (
      !/aws|smithy/.test(pkg) ||
      pkg in CLIENT_SERVICE ||
      pkg === '@aws-sdk/lib-dynamodb' ||
      NON_CALLING_AWS_PACKAGES.has(pkg)
    )
      continue;
    unmapped.push(`${spec}: an AWS-related package whose calls this check cannot see`);
  }
  return { actions: [...actions].sort(), unmapped };
}
