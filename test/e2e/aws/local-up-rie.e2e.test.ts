/**
 * `spiritctl local up --lambda rie`: the local stack with its functions run from the packaged zips under AWS's
 * Runtime Interface Emulator and runtime interface client, one emulator per container, converges like the
 * in-process one — the bus's deliveries, the state table and the cluster writes all go through AWS's runtime.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { rieMissing } from '../../../dev/local/functions/rie.ts';
import { packaged } from '../../support/packaged.ts';

describe('the local stack with --lambda rie', () => {
  let fleet: LocalFleet | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await fleet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('converges its pools with every reconcile run by the emulator', async () => {
    const missing = rieMissing();
    if (missing) throw new Error(missing);
    dir = await mkdtemp(join(tmpdir(), 'ps-local-rie-'));
    const lines: string[] = [];
    fleet = await startLocalFleet({
      clusters: 1,
      pools: 2,
      nodesPerPool: 1,
      cloudPools: 0,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      lambda: 'rie',
      packagedDir: (await packaged()).dir,
      log: (line) => lines.push(line),
    });
    expect(lines.some((l) => l.includes('under aws-lambda-rie'))).toBe(true);
    await fleet.waitConverged(60_000);
    expect(fleet.reconcile.stats).toMatchObject({ errors: 0 });
    expect(fleet.reconcile.stats.invocations).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
