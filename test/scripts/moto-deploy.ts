/**
 * Deploys what `npm run package` wrote into moto the way `osls deploy` does it in AWS: the create-stack
 * template first (the deployment bucket alone), the function zips and the full template uploaded into that
 * bucket, then the stack updated to the full template by its S3 URL, with the stack's parameters. The
 * template is not changed: Lambda functions get their code from the zips in the bucket, as it says
 * (S3Bucket/S3Key), not inline.
 */
import { readFile } from 'node:fs/promises';
import { Sha256 } from '@aws-crypto/sha256-js';
import {
  CloudFormationClient,
  CreateStackCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  type Parameter,
  paginateListStackResources,
  type StackResourceSummary,
  UpdateStackCommand,
} from '@aws-sdk/client-cloudformation';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { MOTO_CREDENTIALS } from '../support/moto-server.ts';
import type { Packaged } from '../support/packaged.ts';
import { waitFor } from '../support/wait.ts';
import type { Resource, Template } from './cfn.ts';

export interface MotoDeployment {
  stackName: string;
  template: Template;
  outputs: Record<string, string>;
  /** What moto created, by logical id. */
  resources: Map<string, StackResourceSummary>;
  /** The template's resources moto has no CloudFormation support for (it skips them), by logical id. */
  skipped: { logicalId: string; type: string }[];
}

export interface DeployOptions {
  endpoint: string;
  region: string;
  stackName: string;
  parameters: Record<string, string>;
}

/** Stack states that end an operation, and those of them that are failures. */
const SETTLED = /_COMPLETE$|_FAILED$/;
const FAILED = /_FAILED$|ROLLBACK/;
const STACK_DEADLINE_MS = 60_000;

export async function deployPackaged(pkg: Packaged, opts: DeployOptions): Promise<MotoDeployment> {
  const cfn = new CloudFormationClient({ endpoint: opts.endpoint, region: opts.region, credentials: MOTO_CREDENTIALS });
  try {
    const createTemplate = await readFile(
      pkg.templatePath.replace(/-update-stack\.json$/, '-create-stack.json'),
      'utf8',
    );
    const updateTemplate = await readFile(pkg.templatePath, 'utf8');
    const template = JSON.parse(updateTemplate) as Template;

    await cfn.send(new CreateStackCommand({ StackName: opts.stackName, TemplateBody: createTemplate }));
    const created = await settled(cfn, opts.stackName);
    const bucket = outputsOf(created).ServerlessDeploymentBucketName;
    if (!bucket) throw new Error('the create-stack template gave no ServerlessDeploymentBucketName output');

    const s3 = (key: string, body: Uint8Array) => signedFetch(opts, 's3', 'PUT', `/${bucket}/${key}`, body);
    const codeKeys = lambdaCodeKeys(template);
    await Promise.all(
      codeKeys.map(async ({ functionName, key }) => s3(key, await readFile(pkg.zipPath(functionName)))),
    );
    // osls keeps the template next to the zips and hands CloudFormation its URL (it is over TemplateBody's 51 KB).
    const templateKey = `${codeKeys[0].key.replace(/[^/]+$/, '')}compiled-cloudformation-template.json`;
    await s3(templateKey, Buffer.from(updateTemplate));
    await cfn.send(
      new UpdateStackCommand({
        StackName: opts.stackName,
        TemplateURL: `https://s3.${opts.region}.amazonaws.com/${bucket}/${templateKey}`,
        Parameters: Object.entries(opts.parameters).map(
          ([ParameterKey, ParameterValue]): Parameter => ({ ParameterKey, ParameterValue }),
        ),
        Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'],
      }),
    );
    const stack = await settled(cfn, opts.stackName);

    const resources = new Map<string, StackResourceSummary>();
    for await (const page of paginateListStackResources({ client: cfn }, { StackName: opts.stackName }))
      for (const r of page.StackResourceSummaries ?? []) resources.set(r.LogicalResourceId!, r);
    const skipped = Object.entries(template.Resources)
      .filter(([id]) => !resources.has(id))
      .map(([logicalId, r]) => ({ logicalId, type: r.Type }));
    return { stackName: opts.stackName, template, outputs: outputsOf(stack), resources, skipped };
  } finally {
    cfn.destroy();
  }
}

type Stack = NonNullable<Awaited<ReturnType<typeof describeStack>>>;

async function describeStack(cfn: CloudFormationClient, stackName: string) {
  return (await cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
}

/** Waits for the stack's operation to end; a failed one is reported with the events that say why. */
async function settled(cfn: CloudFormationClient, stackName: string): Promise<Stack> {
  const stack = await waitFor(
    async () => {
      const s = await describeStack(cfn, stackName);
      return s && SETTLED.test(s.StackStatus ?? '') ? s : undefined;
    },
    STACK_DEADLINE_MS,
    `stack ${stackName} to settle`,
    100,
  );
  if (FAILED.test(stack.StackStatus ?? '')) {
    const events = (await cfn.send(new DescribeStackEventsCommand({ StackName: stackName }))).StackEvents ?? [];
    const why = events
      .filter((e) => e.ResourceStatusReason)
      .map((e) => `${e.LogicalResourceId} ${e.ResourceStatus}: ${e.ResourceStatusReason}`)
      .join('\n');
    throw new Error(`stack ${stackName} is ${stack.StackStatus}: ${stack.StackStatusReason ?? ''}\n${why}`);
  }
  return stack;
}

function outputsOf(stack: Stack): Record<string, string> {
  return Object.fromEntries((stack.Outputs ?? []).map((o) => [o.OutputKey!, o.OutputValue!]));
}

/** Each Lambda function's zip (named after the function in serverless.yml) and its key in the deployment bucket. */
function lambdaCodeKeys(template: Template): { functionName: string; key: string }[] {
  const functions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  return functions.map(([id, r]: [string, Resource]) => {
    const { S3Bucket, S3Key } = r.Properties.Code ?? {};
    if (S3Bucket?.Ref !== 'ServerlessDeploymentBucket' || typeof S3Key !== 'string')
      throw new Error(`${id}: Code is not a zip in the deployment bucket (${JSON.stringify(r.Properties.Code)})`);
    const functionName = /([^/]+)\.zip$/.exec(S3Key)?.[1];
    if (!functionName) throw new Error(`${id}: S3Key ${S3Key} names no zip`);
    return { functionName, key: S3Key };
  });
}

/** One SigV4-signed request to moto for the APIs this repository has no SDK client of (S3's PUT, IAM's queries). */
export async function signedFetch(
  opts: Pick<DeployOptions, 'endpoint' | 'region'>,
  service: string,
  method: string,
  path: string,
  body?: Uint8Array,
): Promise<Response> {
  const url = new URL(path, opts.endpoint);
  const signer = new SignatureV4({ service, region: opts.region, credentials: MOTO_CREDENTIALS, sha256: Sha256 });
  const signed = await signer.sign(
    new HttpRequest({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: {
        host: url.host,
        ...(body ? { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } : {}),
      },
      body,
    }),
  );
  const { host: _host, ...headers } = signed.headers;
  const res = await fetch(url, { method, headers, body });
  if (!res.ok) throw new Error(`${service} ${method} ${url.pathname}: HTTP ${res.status} ${await res.text()}`);
  return res;
}
