/**
 * docs/operations.md stays true: every spiritctl line names a real command with real flags, the event in
 * the manual reconcile example passes the event schema, and the blocks marked `<!-- runs locally -->` run
 * verbatim, in order, against a local stack.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Command, parseCommandArgs } from '../../cli/command.ts';
import { commands } from '../../cli/commands/index.ts';
import { type LocalFleet, startLocalFleet } from '../../dev/local/fleet/fleet.ts';
import { reconcileRequestDetailSchema } from '../../events/reconcile-request.ts';
import { RECONCILE_REQUEST_DETAIL_TYPE, RECONCILER_SOURCE } from '../../events/source.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..');
const DOC = join(REPO, 'docs', 'operations.md');

interface Block {
  runsLocally: boolean;
  lines: string[];
}

function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const re = /(<!-- runs locally -->\n)?```sh\n([\s\S]*?)```/g;
  for (const m of markdown.matchAll(re)) {
    const lines = m[2]
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    blocks.push({ runsLocally: Boolean(m[1]), lines });
  }
  return blocks;
}

/** Words of one shell line (quotes and a trailing `# comment` handled; no expansions needed here). */
function words(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | undefined;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = undefined;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      started = true;
    } else if (ch === '#' && !started && cur === '') {
      break;
    } else if (/\s/.test(ch)) {
      if (started || cur) out.push(cur);
      cur = '';
      started = false;
    } else {
      cur += ch;
      started = true;
    }
  }
  if (started || cur) out.push(cur);
  return out;
}

function commandOf(argv: string[]): { cmd: Command; rest: string[] } | undefined {
  const matches = commands
    .filter((c) => c.path.every((w, i) => argv[i] === w))
    .sort((a, b) => b.path.length - a.path.length);
  return matches[0] ? { cmd: matches[0], rest: argv.slice(matches[0].path.length) } : undefined;
}

describe('docs/operations.md', () => {
  let blocks: Block[];
  beforeAll(async () => {
    blocks = shellBlocks(await readFile(DOC, 'utf8'));
  });

  it('names only real spiritctl commands and flags', () => {
    const lines = blocks.flatMap((b) => b.lines).filter((l) => l.startsWith('spiritctl '));
    expect(lines.length).toBeGreaterThanOrEqual(15);
    for (const line of lines) {
      const found = commandOf(words(line).slice(1));
      expect(found, `no such command: ${line}`).toBeDefined();
      const { positionals } = parseCommandArgs(found!.cmd, found!.rest);
      const declared = found!.cmd.positionals ?? [];
      if (!declared.at(-1)?.variadic)
        expect(positionals.length, `too many arguments: ${line}`).toBeLessThanOrEqual(declared.length);
      expect(positionals.length, `missing arguments: ${line}`).toBeGreaterThanOrEqual(
        declared.filter((p) => p.required).length,
      );
    }
  });

  it('gives a manual reconcile request the event schema accepts', () => {
    const line =
      blocks.flatMap((b) => b.lines).find((l) => l.startsWith('aws events put-events --entries [')) ??
      blocks.flatMap((b) => b.lines).find((l) => l.startsWith("aws events put-events --entries '"));
    expect(line).toBeDefined();
    const entries = JSON.parse(words(line!)[4]) as Array<Record<string, string>>;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ Source: RECONCILER_SOURCE, DetailType: RECONCILE_REQUEST_DETAIL_TYPE });
    expect(reconcileRequestDetailSchema.safeParse(JSON.parse(entries[0].Detail)).success).toBe(true);
  });

  describe('blocks marked "runs locally", against a local stack', () => {
    let fleet: LocalFleet;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ps-ops-doc-'));
      fleet = await startLocalFleet({
        clusters: 1,
        pools: 2,
        nodesPerPool: 1,
        stateDir: join(dir, '.local'),
        readyDelayMs: 0,
        retryBaseDelayMs: 20,
      });
      await fleet.waitConverged(60_000);
    }, 90_000);
    afterAll(async () => {
      await fleet?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('runs each line with exit code 0', async () => {
      const runnable = blocks.filter((b) => b.runsLocally).flatMap((b) => b.lines);
      expect(runnable.length).toBeGreaterThanOrEqual(10);
      const env = {
        ...process.env,
        SPIRITCTL_DYNAMO_ENDPOINT: fleet.dynamo.endpoint,
        SPIRITCTL_BUS_ENDPOINT: fleet.bus.endpoint,
        EVENT_BUS_NAME: fleet.eventBusName,
        REPO,
        NODE: process.execPath,
      };
      const outputs: Record<string, string> = {};
      for (const line of runnable) {
        const script = `spiritctl() { "$NODE" "$REPO/bin/spiritctl.mjs" "$@"; }\n${line}\n`;
        const result = await run('bash', ['-c', script], { cwd: dir, env, maxBuffer: 16 << 20 }).catch(
          (err) => err as { code: number; stdout: string; stderr: string },
        );
        expect((result as { code?: number }).code ?? 0, `${line}\n${(result as { stderr: string }).stderr}`).toBe(0);
        outputs[line] = result.stdout;
      }
      // What the walk-through did is visible in what it printed and wrote.
      const selected = JSON.parse(outputs['spiritctl clusters list --selector rollout-group=canary --json']);
      expect(selected.clusters.map((c: { id: string }) => c.id)).toEqual(['cluster-01']);
      const afterRollback = JSON.parse(outputs['spiritctl rollout status ops-doc --json']);
      expect(afterRollback.id).toBe('ops-doc');
      const audit = JSON.parse(outputs['spiritctl audit --cluster cluster-01 --json']);
      expect(JSON.stringify(audit)).toContain('cluster-01');
      expect((await stat(join(dir, '.local', 'audit-report.html'))).size).toBeGreaterThan(1000);
      expect(JSON.parse(outputs['spiritctl events dlq --json'])).toMatchObject({ count: expect.any(Number) });
    }, 240_000);
  });
});
