import { describe, expect, it } from 'vitest';
import { functionBundles, inputsAtStart } from '../../support/function-bundles.ts';

const API_SCHEMAS = 'core/poolspirit/api.ts';

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
