/**
 * A pool's PKI: what issuing it costs (two CAs, five leaves, eight key pairs: a new pool's reconcile) and
 * what checking existing material costs when the memo cannot answer, against a floor measured in the same
 * run: generating the eight key pairs alone, which no issuer can avoid. Runs are interleaved and medians
 * reported. `npm run bench -- pki [--pools 200] [--runs 5]` (docs/decisions/0027-certificates-written-as-der.md)
 */
import { parseArgs } from 'node:util';
import { intFlag } from '../../cli/command.ts';
import { webCryptoKeyFactory } from '../../core/render/keys.ts';
import { objectNames } from '../../core/render/names.ts';
import { ensurePki } from '../../core/render/pki.ts';
import { DEFAULT_PKI_POLICY, leafSpecs } from '../../core/render/pki-spec.ts';
import { median, round } from './lib/stats.ts';

const KEY_PAIRS_PER_POOL = 8;

export async function run(args: string[]): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: { pools: { type: 'string', default: '200' }, runs: { type: 'string', default: '5' } },
  });
  const pools = intFlag('pools', values.pools, 1, 10_000);
  const runs = intFlag('runs', values.runs, 1, 50);
  const keys = webCryptoKeyFactory();
  const leavesOf = (pool: string) => leafSpecs(objectNames(pool), 'pool-spirit-system', 'cluster.local', '10.96.0.10');
  const perPool = async (work: (i: number) => Promise<unknown> | unknown) => {
    const started = performance.now();
    for (let i = 0; i < pools; i++) await work(i);
    return (performance.now() - started) / pools;
  };

  const floor: number[] = [];
  const issue: number[] = [];
  const check: number[] = [];
  for (let r = 0; r < runs; r++) {
    process.stderr.write(`[pki] run ${r + 1}/${runs}, ${pools} pools\n`);
    floor.push(
      await perPool((i) => {
        for (let k = 0; k < KEY_PAIRS_PER_POOL; k++) keys.generateKeyObjects(`floor-${i}-${k}`);
      }),
    );
    const issued: Record<string, string>[] = [];
    const now = new Date();
    issue.push(
      await perPool(async (i) => {
        const pool = `run${r}-pool-${i}`;
        const result = await ensurePki({
          pool,
          leaves: leavesOf(pool),
          existing: {},
          now,
          keys,
          policy: DEFAULT_PKI_POLICY,
        });
        issued.push(result.files);
      }),
    );
    // A policy the memo has not seen (it changes only what new certificates get): the check itself answers.
    const policy = { ...DEFAULT_PKI_POLICY, leafValidityDays: DEFAULT_PKI_POLICY.leafValidityDays + 1 + r };
    check.push(
      await perPool(async (i) => {
        const pool = `run${r}-pool-${i}`;
        const result = await ensurePki({ pool, leaves: leavesOf(pool), existing: issued[i]!, now, keys, policy });
        if (!result.reused)
          throw new Error(`${pool}: expected the material just issued to be reused (${result.reasons})`);
      }),
    );
  }
  const issueMs = median(issue);
  const floorMs = median(floor);
  return {
    benchmark: 'pki',
    pools,
    runs,
    /** Generating a pool's eight key pairs alone, ms: the part of issuing no issuer avoids. */
    floor: { keyPairsMsPerPool: round(floorMs, 3) },
    issueMsPerPool: round(issueMs, 3),
    checkMsPerPool: round(median(check), 3),
    issueVsFloor: round(issueMs / floorMs, 2),
  };
}
