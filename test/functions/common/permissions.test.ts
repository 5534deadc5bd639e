import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePattern, matches } from '../../../dev/local/bus/pattern.ts';
import { loadRules } from '../../../dev/local/bus/rules-from-serverless.ts';
import {
  FUNCTION_PERMISSIONS,
  type FunctionName,
  iamActions,
  iamEventsCondition,
} from '../../../functions/common/permissions.ts';
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

describe('what a stolen role can put on the bus', () => {
  const rules = loadRules(join(import.meta.dirname, '..', '..', '..', 'serverless.yml')).filter(
    (r) => r.pattern !== undefined,
  );
  const names = Object.keys(FUNCTION_PERMISSIONS) as FunctionName[];

  it('every role that may PutEvents is held to named events, each one a rule routes to a function', () => {
    const senders = names.filter((n) => FUNCTION_PERMISSIONS[n].events.includes('PutEvents'));
    expect(senders.sort()).toEqual(['audit', 'cloudEvents', 'probe']);
    for (const name of senders) {
      const put = FUNCTION_PERMISSIONS[name].eventsPut ?? [];
      expect(put.length, name).toBeGreaterThan(0);
      for (const routing of put) {
        const event = { source: routing.source, 'detail-type': routing.detailType, detail: {} };
        const targets = rules.filter((r) => matches(compilePattern(r.pattern), event)).map((r) => r.target);
        expect(targets.length, `${name} may put ${routing.detailType}: no rule routes it`).toBeGreaterThan(0);
      }
    }
  });

  it('prints one value as IAM does, and several as a list any of which matches', () => {
    expect(iamEventsCondition(FUNCTION_PERMISSIONS.probe)).toEqual({
      StringEquals: { 'events:source': 'pool-spirit.reconciler', 'events:detail-type': 'Leader Probe Request' },
    });
    expect(iamEventsCondition(FUNCTION_PERMISSIONS.audit)).toEqual({
      StringEquals: {
        'events:source': 'pool-spirit.reconciler',
        'events:detail-type': ['Cluster Audit Request', 'Reconcile Request'],
      },
    });
    expect(iamEventsCondition(FUNCTION_PERMISSIONS.reconcile)).toBeUndefined();
  });
});
