import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_SIZE_CAP_BYTES, compareLoadTimes, LOAD_RATIO_TARGET } from '../../dev/bench/bundles.ts';
import {
  FUNCTION_PERMISSIONS,
  type FunctionName,
  iamActions,
  iamEventsCondition,
} from '../../functions/common/permissions.ts';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../functions/reconcile/deps.ts';
import { buildBundle, ROOT, readServerlessBuild, sdkBaselineSource, sdkUsage } from '../../scripts/bundle-functions.ts';
import { packaged } from '../support/packaged.ts';
import {
  applyConditions,
  evaluateConditions,
  globRegExp,
  grantsOf,
  grantText,
  logicalName,
  type Resource,
  statementsIn,
  substitutePseudo,
  type Template,
} from './cfn.ts';
import { readZip } from './zip.ts';

/**
 * `npm run package` (osls, offline) once (the packaging the AWS judges share), and the CloudFormation and zips it
 * writes checked against the design: least-privilege roles per function (the table in
 * functions/common/permissions.ts), a retry policy and a dead-letter queue on every rule target, alarms,
 * log retention, the table's protections, and each bundle's size and load time. The prod stage's
 * parameters come from `osls print --stage prod` (packaging it again would double the time for two values).
 */
const run = promisify(execFile);

/** Deployment zip (bundle + its source map): well under Lambda's 50 MB, and a tripwire for a bloated map. */
const MAX_ZIP_BYTES = 4 * 1024 * 1024;
/**
 * A bundle's load cost against its SDK-only baseline, on CPU time (stable on a busy machine, unlike elapsed
 * time), loaded from the packaged zip. The target is LOAD_RATIO_TARGET (1.5×), which the test holds the
 * median function to; the bench (`npm run bench -- bundles`, more runs, one load at a time) measured
 * 1.16-1.33 for every function when this was set. Any single function gets room above the target for the
 * noise of five loads on a shared CI machine (one function's ratio reached 1.7 in a run where the median
 * was 1.0).
 */
const LOAD_CPU_RATIO_CEILING = 2;
const LOAD_RUNS = 5;
const STAGE = 'dev';

const build = readServerlessBuild();
const functionNames = build.functions.map((f) => f.name) as FunctionName[];
let outDir: string;
/** Where the load test unpacks the zips: its own, since the packaged output is shared. */
let loadDir: string;
let template: Template;
let resources: Record<string, Resource>;
let prodConfig: { provider: Record<string, any>; resources: { Resources: Record<string, Resource> } };

beforeAll(async () => {
  const env = {
    ...process.env,
    PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
  };
  // The one packaging of these inputs the AWS judges share (test/support/packaged.ts): two `osls package`
  // runs at once in one service directory share serverless-esbuild's work folder, and one of them stalls.
  const [packagedOnce, printed] = await Promise.all([
    packaged(),
    run('osls', ['print', '--stage', 'prod', '--format', 'json'], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 }),
  ]);
  outDir = packagedOnce.dir;
  loadDir = await mkdtemp(join(tmpdir(), 'ps-package-load-'));
  template = JSON.parse(await readFile(packagedOnce.templatePath, 'utf8'));
  resources = template.Resources;
  prodConfig = JSON.parse(printed.stdout);
}, 300_000);

afterAll(async () => {
  if (loadDir) await rm(loadDir, { recursive: true, force: true });
});

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const getAtt = (id: string, attr: string) => ({ 'Fn::GetAtt': [id, attr] });

describe('functions', () => {
  it('runs every function on Node 22, arm64, with a timeout, memory and its own role', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.map(([id]) => id).sort()).toEqual(functionNames.map((n) => `${logicalName(n)}LambdaFunction`).sort());
    for (const name of functionNames) {
      const fn = resources[`${logicalName(name)}LambdaFunction`].Properties;
      expect(fn.Runtime, name).toBe('nodejs22.x');
      expect(fn.Architectures, name).toEqual(['arm64']);
      expect(fn.Timeout, name).toBeGreaterThan(0);
      expect(fn.MemorySize, name).toBeGreaterThanOrEqual(128);
      expect(fn.Role, name).toEqual(getAtt(`${logicalName(name)}Role`, 'Arn'));
    }
  });

  it('caps the concurrency of the functions that fan out to cluster apiservers', () => {
    for (const name of ['reconcile', 'audit', 'cloudEvents']) {
      expect(
        resources[`${logicalName(name)}LambdaFunction`].Properties.ReservedConcurrentExecutions,
        name,
      ).toBeGreaterThan(0);
    }
  });

  it('keeps each function log group with a retention period (30 days in dev, 90 in prod)', () => {
    for (const name of functionNames) {
      const group = resources[`${logicalName(name)}LogGroup`];
      expect(group?.Type, name).toBe('AWS::Logs::LogGroup');
      expect(group.Properties.RetentionInDays, name).toBe(30);
      expect(resources[`${logicalName(name)}LambdaFunction`].DependsOn, name).toContain(`${logicalName(name)}LogGroup`);
    }
    expect(prodConfig.provider.logRetentionInDays).toBe(90);
  });
});

describe('rules', () => {
  it('gives every rule target a retry policy and its own function dead-letter queue', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules.length).toBeGreaterThanOrEqual(functionNames.length);
    for (const [id, rule] of rules) {
      for (const target of rule.Properties.Targets) {
        const fnId: string = target.Arn['Fn::GetAtt'][0];
        expect(target.RetryPolicy, id).toEqual({
          MaximumRetryAttempts: expect.any(Number),
          MaximumEventAgeInSeconds: expect.any(Number),
        });
        expect(target.DeadLetterConfig?.Arn, id).toEqual(
          getAtt(fnId.replace(/LambdaFunction$/, 'DeadLetterQueue'), 'Arn'),
        );
      }
    }
  });

  it('sends the events a function failed on, after Lambda retries, to the same dead-letter queue', () => {
    const configs = ofType('AWS::Lambda::EventInvokeConfig').map(([, c]) => c.Properties);
    for (const name of functionNames) {
      const config = configs.find((c) => c.FunctionName?.Ref === `${logicalName(name)}LambdaFunction`);
      expect(config, name).toMatchObject({
        Qualifier: '$LATEST',
        MaximumRetryAttempts: expect.any(Number),
        MaximumEventAgeInSeconds: expect.any(Number),
        DestinationConfig: { OnFailure: { Destination: getAtt(`${logicalName(name)}DeadLetterQueue`, 'Arn') } },
      });
    }
  });

  it('lets only a function own rules send to its dead-letter queue', () => {
    const busName = resources.EventBus.Properties.Name;
    const ruleArns = ofType('AWS::Events::Rule').map(([, rule]) => {
      const onBus = rule.Properties.EventBusName ? `${busName}/` : '';
      return {
        fn: rule.Properties.Targets[0].Arn['Fn::GetAtt'][0] as string,
        arn: `arn:aws:events:eu-west-1:123456789012:rule/${onBus}${rule.Properties.Name}`,
      };
    });
    for (const name of functionNames) {
      const policy = resources[`${logicalName(name)}DeadLetterQueuePolicy`];
      expect(policy?.Properties.Queues, name).toEqual([{ Ref: `${logicalName(name)}DeadLetterQueue` }]);
      const [statement] = policy.Properties.PolicyDocument.Statement;
      expect(statement).toMatchObject({
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: getAtt(`${logicalName(name)}DeadLetterQueue`, 'Arn'),
      });
      const pattern = globRegExp(substitutePseudo(statement.Condition.ArnLike['aws:SourceArn']['Fn::Sub']));
      for (const rule of ruleArns)
        expect(pattern.test(rule.arn), `${name} DLQ policy vs ${rule.arn}`).toBe(
          rule.fn === `${logicalName(name)}LambdaFunction`,
        );
    }
  });

  it('routes the pool-spirit events on the stack event bus, which the functions are told about', () => {
    expect(resources.EventBus.Type).toBe('AWS::Events::EventBus');
    const onBus = ofType('AWS::Events::Rule').filter(([, r]) =>
      JSON.stringify(r.Properties.EventPattern ?? {}).includes('pool-spirit.'),
    );
    expect(onBus.length).toBeGreaterThan(0);
    for (const [id, rule] of onBus) expect(rule.Properties.EventBusName, id).toEqual(getAtt('EventBus', 'Name'));
    for (const name of functionNames)
      expect(resources[`${logicalName(name)}LambdaFunction`].Properties.Environment.Variables.EVENT_BUS_NAME).toEqual({
        Ref: 'EventBus',
      });
  });
});

describe('permissions', () => {
  it('grants no wildcard action in any Allow statement (roles, trust, queue and bucket policies)', () => {
    const statements = statementsIn(resources);
    expect(statements.length).toBeGreaterThan(functionNames.length);
    for (const { where, statement } of statements) {
      expect(statement.NotAction, where).toBeUndefined();
      // serverless's deployment bucket policy denies s3:* without TLS: a Deny with a wildcard only takes access away.
      if (statement.Effect !== 'Allow') continue;
      for (const action of [statement.Action].flat()) expect(action, where).toMatch(/^[a-z0-9-]+:[A-Za-z]+$/);
    }
  });

  it('has one role per function and no shared execution role', () => {
    const roles = ofType('AWS::IAM::Role')
      .map(([id]) => id)
      .sort();
    expect(roles).toEqual(functionNames.map((n) => `${logicalName(n)}Role`).sort());
    for (const id of roles) {
      expect(resources[id].Properties.AssumeRolePolicyDocument.Statement, id).toEqual([
        { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ]);
      expect(resources[id].Properties.ManagedPolicyArns, id).toBeUndefined();
    }
  });

  const expectedGrants = (name: FunctionName, secretAccess: boolean) => {
    const actions = iamActions(FUNCTION_PERMISSIONS[name]);
    const on = (resource: unknown, condition?: unknown) => (action: string) => grantText(action, resource, condition);
    return [
      // Not calls of its code: writing its own logs, and Lambda sending its failed events to its own DLQ.
      ...['logs:CreateLogStream', 'logs:PutLogEvents'].map(on(getAtt(`${logicalName(name)}LogGroup`, 'Arn'))),
      on(getAtt(`${logicalName(name)}DeadLetterQueue`, 'Arn'))('sqs:SendMessage'),
      ...actions.dynamodb.map(on(getAtt('StateTable', 'Arn'))),
      ...actions.events.map(on(getAtt('EventBus', 'Arn'), iamEventsCondition(FUNCTION_PERMISSIONS[name]))),
      ...(secretAccess
        ? actions.secretsmanager.map(
            on({
              'Fn::Sub': `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:pool-spirit/${STAGE}/*`,
            }),
          )
        : []),
    ].sort();
  };

  for (const secretAccess of [false, true]) {
    it(`grants each role exactly its row of the permission table (clusterAccess=${secretAccess ? 'secret' : 'eks'})`, () => {
      const conditions = evaluateConditions(template, secretAccess ? { SecretClusterAccess: true } : {});
      expect(conditions.SecretClusterAccess).toBe(secretAccess); // the dev stage's default is eks
      for (const name of functionNames) {
        const role = applyConditions(resources[`${logicalName(name)}Role`], conditions);
        expect(grantsOf(role), name).toEqual(expectedGrants(name, secretAccess));
      }
    });
  }
});

describe('state table', () => {
  it('has point-in-time recovery, a TTL attribute, on-demand billing and encryption', () => {
    const { Properties: table } = resources.StateTable;
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('is deletion-protected in prod, not in dev', () => {
    expect(resources.StateTable.Properties.DeletionProtectionEnabled).toBe(false);
    expect(prodConfig.resources.Resources.StateTable.Properties.DeletionProtectionEnabled).toBe(true);
  });
});

describe('alarms', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const alarmOn = (namespace: string, metric: string, dimension: { Name: string; Value: unknown }) =>
    alarms().find(
      (a) =>
        a.Namespace === namespace &&
        a.MetricName === metric &&
        JSON.stringify(a.Dimensions) === JSON.stringify([dimension]),
    );

  it('alarms when any dead-letter queue holds a message and when any function fails (reconcile: throttles too)', () => {
    for (const name of functionNames) {
      const dlq = alarmOn('AWS/SQS', 'ApproximateNumberOfMessagesVisible', {
        Name: 'QueueName',
        Value: getAtt(`${logicalName(name)}DeadLetterQueue`, 'QueueName'),
      });
      const errors =
        name === 'reconcile'
          ? reconcileFailuresAlarm()
          : alarmOn('AWS/Lambda', 'Errors', {
              Name: 'FunctionName',
              Value: { Ref: `${logicalName(name)}LambdaFunction` },
            });
      for (const alarm of [dlq, errors])
        expect(alarm, name).toMatchObject({
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          TreatMissingData: 'notBreaching',
        });
    }
    expect(
      alarmOn('AWS/Lambda', 'Throttles', { Name: 'FunctionName', Value: { Ref: 'ReconcileLambdaFunction' } }),
    ).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  /** Reconcile's errors alarm: Lambda's Errors less the requeues the function counts (both are "errors" to Lambda). */
  const reconcileFailuresAlarm = () =>
    alarms().find((a) => {
      const metrics = (a.Metrics ?? []) as {
        Id: string;
        Expression?: string;
        MetricStat?: { Metric: Record<string, unknown> };
      }[];
      const byId = new Map(metrics.map((m) => [m.Id, m]));
      const errors = byId.get('errors')?.MetricStat?.Metric;
      const requeues = byId.get('requeues')?.MetricStat?.Metric;
      return (
        errors?.Namespace === 'AWS/Lambda' &&
        errors.MetricName === 'Errors' &&
        JSON.stringify(errors.Dimensions) ===
          JSON.stringify([{ Name: 'FunctionName', Value: { Ref: 'ReconcileLambdaFunction' } }]) &&
        requeues?.Namespace === METRICS_NAMESPACE &&
        requeues.MetricName === 'ReconcileRequeues' &&
        JSON.stringify(requeues.Dimensions) === JSON.stringify([{ Name: 'service', Value: SERVICE_NAME }]) &&
        byId.get('failures')?.Expression === 'errors - FILL(requeues, 0)'
      );
    });

  it('notifies the alarm topic only when the stage names one', () => {
    const withTopic = evaluateConditions(template, { HasAlarmTopic: true });
    expect(template.Parameters?.AlarmTopicArn?.Default).toBe(''); // the stage param alarmTopicArn defaults to ''
    expect(evaluateConditions(template).HasAlarmTopic).toBe(false);
    for (const alarm of alarms()) {
      expect(applyConditions(alarm, evaluateConditions(template)).AlarmActions).toBeUndefined();
      expect(applyConditions(alarm, withTopic).AlarmActions).toEqual([{ Ref: 'AlarmTopicArn' }]);
      expect(applyConditions(alarm, withTopic).OKActions).toEqual([{ Ref: 'AlarmTopicArn' }]);
    }
  });
});

describe('bundles', () => {
  const zipOf = (name: string) => join(outDir, `${name}.zip`);
  const bundlePath = (entry: string) => entry.replace(/\.ts$/, '.mjs');

  it(`ships each handler as a minified ESM bundle and only its own chunks, at most ${BUNDLE_SIZE_CAP_BYTES} bytes of code`, async () => {
    for (const fn of build.functions) {
      expect(resources[`${logicalName(fn.name)}LambdaFunction`].Properties.Handler).toBe(
        `${fn.entry.replace(/\.ts$/, '')}.handler`,
      );
      const entries = await readZip(zipOf(fn.name));
      const names = [...entries.keys()];
      const bundle = entries.get(bundlePath(fn.entry));
      expect(bundle, `${fn.name}.zip holds ${names.join(', ')}`).toBeDefined();
      // Nothing but this function's bundle, its chunks and their source maps (no other function's chunks).
      const own = `${dirname(fn.entry)}/`;
      const code = names.filter((n) => n.endsWith('.mjs'));
      expect(
        names.filter((n) => !n.startsWith(own) || !/\.mjs(\.map)?$/.test(n)),
        fn.name,
      ).toEqual([]);
      expect(
        code.filter((n) => !entries.has(`${n}.map`)),
        `${fn.name}: code without a source map`,
      ).toEqual([]);
      // Every chunk the code imports is in the zip, and every chunk in the zip is imported by something.
      const imported = new Set<string>();
      for (const file of code) {
        for (const [, spec] of entries
          .get(file)!
          .data()
          .toString('utf8')
          .matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)) {
          const target = join(dirname(file), spec);
          expect(entries.has(target), `${file} imports ${spec}, missing from ${fn.name}.zip`).toBe(true);
          imported.add(target);
        }
      }
      expect(
        code.filter((n) => n !== bundlePath(fn.entry) && !imported.has(n)),
        `${fn.name}: unused chunks`,
      ).toEqual([]);
      const codeBytes = code.reduce((sum, n) => sum + entries.get(n)!.size, 0);
      expect(codeBytes, fn.name).toBeLessThanOrEqual(BUNDLE_SIZE_CAP_BYTES);
      expect((await stat(zipOf(fn.name))).size, fn.name).toBeLessThanOrEqual(MAX_ZIP_BYTES);
    }
  });

  it(`loads the median bundle within ${LOAD_RATIO_TARGET}× (each within ${LOAD_CPU_RATIO_CEILING}×) the CPU time of a bundle of only its AWS SDK clients`, async () => {
    const work = join(loadDir, 'load');
    const pairs = await Promise.all(
      build.functions.map(async (fn) => {
        // The packaged bundle, its chunks and source maps, as Lambda unpacks them.
        const entries = await readZip(zipOf(fn.name));
        for (const [name, entry] of entries) {
          await mkdir(dirname(join(work, fn.name, name)), { recursive: true });
          await writeFile(join(work, fn.name, name), entry.data());
        }
        const file = join(work, fn.name, bundlePath(fn.entry));
        const baseline = await buildBundle(
          build,
          { name: `${fn.name}-sdk-baseline`, contents: sdkBaselineSource(await sdkUsage(fn.entry)) },
          join(work, fn.name),
        );
        return { name: fn.name, file, baseline: baseline.file };
      }),
    );
    const loads = await compareLoadTimes(pairs, LOAD_RUNS, build.nodeOptions);
    const summary = Object.fromEntries(
      Object.entries(loads).map(([n, l]) => [n, { cpuRatio: l.cpuRatio, loadRatio: l.loadRatio }]),
    );
    for (const [name, load] of Object.entries(loads))
      expect(load.cpuRatio, `${name}: ${JSON.stringify(summary)}`).toBeLessThanOrEqual(LOAD_CPU_RATIO_CEILING);
    const ratios = Object.values(loads)
      .map((l) => l.cpuRatio)
      .sort((a, b) => a - b);
    expect(ratios[Math.floor(ratios.length / 2)], `median function: ${JSON.stringify(summary)}`).toBeLessThanOrEqual(
      LOAD_RATIO_TARGET,
    );
    process.stdout.write(`bundle load, CPU time vs SDK-only baseline: ${JSON.stringify(summary)}\n`);
  }, 240_000);
});
