import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
type Resource = { Type: string; Properties: Record<string, any> };
let resources: Record<string, Resource>;

/** Committed ceiling for one function's deployment zip (minified bundle + source map). */
const MAX_BUNDLE_ZIP_BYTES = 3 * 1024 * 1024;

describe('npm run package (osls, offline)', () => {
  beforeAll(async () => {
    await run('bash', ['scripts/package.sh'], { cwd: root, env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' } });
    const template = JSON.parse(await readFile(join(root, '.serverless', 'cloudformation-template-update-stack.json'), 'utf8'));
    resources = template.Resources;
  }, 240_000);

  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  it('gives every function Node 22 on arm64 with a timeout and memory set', () => {
    const fns = ofType('AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThan(0);
    for (const [, fn] of fns) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Timeout).toBeGreaterThan(0);
      expect(fn.Properties.MemorySize).toBeGreaterThan(0);
    }
  });

  it('gives every rule target a retry policy and a dead-letter queue', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules.length).toBeGreaterThan(0);
    for (const [name, rule] of rules) {
      for (const target of rule.Properties.Targets) {
        expect(target.RetryPolicy, name).toMatchObject({ MaximumRetryAttempts: expect.any(Number), MaximumEventAgeInSeconds: expect.any(Number) });
        expect(target.DeadLetterConfig?.Arn, name).toBeDefined();
      }
    }
  });

  it('grants no wildcard IAM action', () => {
    for (const [, role] of ofType('AWS::IAM::Role')) {
      for (const policy of role.Properties.Policies ?? []) {
        for (const statement of policy.PolicyDocument.Statement) {
          for (const action of [statement.Action].flat()) expect(action).not.toMatch(/\*/);
        }
      }
    }
  });

  it('keeps the state table with point-in-time recovery and a TTL attribute', () => {
    const [[, table]] = ofType('AWS::DynamoDB::Table');
    expect(table.Properties.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled).toBe(true);
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('writes each function bundle under the committed size', async () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const zipName = String(fn.Properties.Code.S3Key).split('/').pop()!;
      const size = (await stat(join(root, '.serverless', zipName))).size;
      expect(size).toBeLessThan(MAX_BUNDLE_ZIP_BYTES);
    }
  });
});
