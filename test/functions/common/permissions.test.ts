import { describe, expect, it } from 'vitest';
import { FUNCTION_PERMISSIONS, type FunctionName, iamActions } from '../../../functions/common/permissions.ts';
import { readServerlessBuild, sdkUsage } from '../../../scripts/bundle-functions.ts';
import { requiredActions } from './sdk-actions.ts';

/**
 * The permission table (functions/common/permissions.ts) against the code: each handler's tree-shaken
 * bundle must reference exactly the SDK commands its row allows. The roles in the packaged CloudFormation
 * are held to the same table in test/scripts/package.e2e.test.ts.
 */
const build = readServerlessBuild();

function rowActions(name: FunctionName): string[] {
  const a = iamActions(FUNCTION_PERMISSIONS[name]);
  return [...a.dynamodb, ...a.events, ...a.secretsmanager].sort();
}

describe('per-function permission table matches what the code calls', () => {
  it('has a row for every function in serverless.yml and no other', () => {
    expect(build.functions.map((f) => f.name).sort()).toEqual(Object.keys(FUNCTION_PERMISSIONS).sort());
  });

  for (const fn of build.functions) {
    it(`${fn.name}: its bundle calls exactly the actions of its row`, async () => {
      const required = requiredActions(await sdkUsage(fn.entry));
      expect(required.unmapped, `${fn.entry} uses AWS in ways the check cannot map`).toEqual([]);
      expect(required.actions, `${fn.entry}: actions its code calls vs functions/common/permissions.ts`).toEqual(
        rowActions(fn.name as FunctionName),
      );
    });
  }
});

describe('the code analysis sees what a change would add', () => {
  it('finds a DeleteItem that a handler reaches through the state-table helpers', async () => {
    const required = requiredActions(await sdkUsage('test/functions/common/fixtures/handler-deletes.ts'));
    expect(required).toEqual({ actions: ['dynamodb:DeleteItem', 'dynamodb:GetItem'], unmapped: [] });
  });

  it('leaves out helpers nothing reachable calls (tree shaking), so unused grants are caught too', async () => {
    // reconcile imports the whole state-table index, yet reaches no Query, Put or Delete.
    const required = requiredActions(await sdkUsage('functions/reconcile/handler.ts'));
    expect(required.actions).not.toContain('dynamodb:Query');
    expect(required.actions).not.toContain('dynamodb:DeleteItem');
  });

  it('refuses calls it cannot read: aggregated clients and packages that call AWS themselves', async () => {
    const required = requiredActions(await sdkUsage('test/functions/common/fixtures/handler-opaque.ts'));
    expect(required.unmapped).toEqual(
      expect.arrayContaining([
        expect.stringContaining('@aws-sdk/client-dynamodb DynamoDB: no IAM action known'),
        expect.stringContaining('@aws-lambda-powertools/idempotency'),
      ]),
    );
  });
});
