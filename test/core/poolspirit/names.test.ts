import { describe, expect, it } from 'vitest';
import * as api from '../../../core/poolspirit/api.ts';
import * as names from '../../../core/poolspirit/names.ts';
import { functionBundles, inputsAtStart } from '../../support/function-bundles.ts';

const API_SCHEMAS = 'core/poolspirit/api.ts';

describe('the PoolSpirit API names', () => {
  it('are the ones the API module exports', () => {
    for (const [name, value] of Object.entries(names)) expect(api[name as keyof typeof api], name).toEqual(value);
    expect(names.API_VERSION).toBe(`${names.GROUP}/${names.VERSION}`);
  });
});

/**
 * Why the names have a module of their own: a function that only names the API (probe's and the rollout's
 * list paths, the NodePool move's owner check) would otherwise build every PoolSpirit schema on its cold start.
 */
describe('functions that never parse a PoolSpirit build none of its schemas at start', () => {
  const bundles = functionBundles('ps-names-bundle-');

  it.each(['probe', 'cloudEvents', 'rollout'])('%s', async (name) => {
    expect(inputsAtStart((await bundles.build(name)).metafile)).not.toContain(API_SCHEMAS);
  });

  it('reconcile, which parses every PoolSpirit it converges, does (the check sees the schemas at all)', async () => {
    expect(inputsAtStart((await bundles.build('reconcile')).metafile)).toContain(API_SCHEMAS);
  });
});
