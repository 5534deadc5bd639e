/**
 * `spiritctl rollout start|status|pause|resume|abort|rollback`. Every command runs the rollout function's
 * own handler in process against the state table (and the clusters it names), so what the CLI does is
 * exactly what the deployed function does. Heavy modules load inside run().
 */
import type { RolloutResult } from '../../functions/rollout/handler.ts';
import type { Command, OptionSpec } from '../command.ts';
import { UsageError } from '../command.ts';
import { parseJsonFlag, readJsonFile } from '../json-input.ts';
import { parseLabel } from './clusters.ts';

/** The largest --patch accepted, inline or from a file. */
const MAX_PATCH_BYTES = 256 * 1024;

import { openStateTable, STATE_TABLE_DETAILS, stateTableFlags } from './state-table-flags.ts';

const outputFlags: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'print the rollout state as JSON (with --watch: one JSON document per line)' },
  watch: {
    type: 'boolean',
    description: 'follow the rollout until it finishes, printing progress per cluster and per pool',
  },
  interval: {
    type: 'string',
    valueName: 'DURATION',
    default: '2s',
    description: 'with --watch: how often to tick and refresh',
  },
  passive: {
    type: 'boolean',
    description: 'with --watch: only read the state, never tick (the schedule rule drives the rollout)',
  },
};

const WATCH_DETAILS = `
Ticks: the deployed function takes one step per active rollout every minute (schedule rule in
serverless.yml). With --watch the CLI also ticks the rollout itself every --interval (it runs the same
handler), so a rollout on the local stack moves at the pace of --interval rather than once a minute; add
--passive to only watch. Conditional writes make a CLI tick and a scheduled tick at once harmless.
Exit code with --watch: 0 when the rollout Succeeded, 1 when it ended Failed, Aborted or RolledBack.`;

const FIELD_FLAGS: Record<string, string> = {
  id: '--id',
  version: '--version',
  patch: '--patch',
  selector: '--selector',
  canary: '--canary',
  maxConcurrency: '--max-concurrency',
  maxFailures: '--max-failures',
  soak: '--soak',
  progressDeadline: '--progress-deadline',
};

/** `maxConcurrency: expected …` → `--max-concurrency: expected …`. */
function inFlagTerms(message: string): string {
  return message.replace(/^(\w+)([.:])/, (all, field: string, sep: string) =>
    FIELD_FLAGS[field] ? `${FIELD_FLAGS[field]}${sep}` : all,
  );
}

/** The rollout's validation error in flag terms: RolloutSpecError names a field, the event schema `rollout.<field>`. */
function validationInFlagTerms(err: Error & { issues?: { path: string; message: string }[] }): string {
  if (err.name !== 'EventValidationError' || !err.issues?.length) return inFlagTerms(err.message);
  return err.issues.map((i) => inFlagTerms(`${i.path.replace(/^rollout\./, '')}: ${i.message}`)).join('; ');
}

async function handlerFor(values: Record<string, unknown>) {
  const { table, close } = await openStateTable(values);
  const { Logger } = await import('@aws-lambda-powertools/logger');
  const { Metrics } = await import('@aws-lambda-powertools/metrics');
  const { createRolloutHandler } = await import('../../functions/rollout/handler.ts');
  const silent = { log() {}, info() {}, warn() {}, error() {}, debug() {}, trace() {} };
  const metrics = new Metrics({ namespace: 'PoolSpirit', serviceName: 'spiritctl', logger: silent });
  Object.assign(metrics, { console: { log() {} } });
  const handler = createRolloutHandler({
    table,
    logger: new Logger({ serviceName: 'spiritctl', logLevel: 'SILENT' }),
    metrics,
  });
  return { table, close, invoke: (event: unknown) => handler(event) };
}

async function durationMs(flag: string, raw: unknown): Promise<number> {
  const { parseDuration } = await import('../../core/rollout/limits.ts');
  try {
    return parseDuration(flag, String(raw));
  } catch (err) {
    throw new UsageError(`--${flag}: ${(err as Error).message.replace(/^[^:]+: /, '')}`);
  }
}

/** Prints the state once, or follows it (ticking unless --passive) until it finishes. */
async function show(
  ctx: Awaited<ReturnType<typeof handlerFor>>,
  id: string,
  values: Record<string, unknown>,
): Promise<number> {
  const { readRollout } = await import('../../adapters/state-table/rollout-state.ts');
  const { TERMINAL_PHASES } = await import('../../core/rollout/types.ts');
  const { renderRollout } = await import('./rollout-view.ts');
  const print = (state: NonNullable<Awaited<ReturnType<typeof readRollout>>>) =>
    process.stdout.write(values.json ? JSON.stringify(state) + (values.watch ? '\n' : '') : renderRollout(state));
  const read = async () => {
    const state = await readRollout(ctx.table, id);
    if (!state) throw new Error(`rollout ${id} does not exist`);
    return state;
  };
  if (!values.watch) {
    const state = await read();
    print(state);
    if (values.json) process.stdout.write('\n');
    return 0;
  }
  const interval = await durationMs('interval', values.interval ?? '2s');
  if (interval < 100) throw new UsageError('--interval must be at least 100ms');
  let last = '';
  for (;;) {
    if (!values.passive) await ctx.invoke({ command: 'tick', rolloutId: id, requestedBy: 'spiritctl --watch' });
    const state = await read();
    const { version: _v, updatedAt: _u, ...comparable } = state;
    const key = JSON.stringify(comparable);
    if (key !== last) {
      if (!values.json) process.stdout.write(`\n[${new Date().toISOString()}]\n`);
      print(state);
      last = key;
    }
    if (TERMINAL_PHASES.includes(state.phase)) return state.phase === 'Succeeded' ? 0 : 1;
    await new Promise((r) => setTimeout(r, interval));
  }
}

const startCommand: Command = {
  path: ['rollout', 'start'],
  summary: 'start a progressive rollout of a pool-spirit version (or any spec change) across the fleet',
  options: {
    version: { type: 'string', valueName: 'V', description: 'bundle version to roll out (spec.version)' },
    patch: {
      type: 'string',
      valueName: 'JSON|@FILE',
      description: 'any other PoolSpirit spec change, as a JSON merge patch on spec (no null)',
    },
    selector: {
      type: 'string',
      valueName: 'k=v,...',
      description: 'only clusters whose registry labels match all of these',
    },
    canary: {
      type: 'string',
      valueName: 'ID,ID|N',
      description: 'clusters updated first, alone (ids, or the first N by id); any canary failure stops the rollout',
    },
    'max-concurrency': { type: 'string', valueName: 'N|N%', default: '1', description: 'clusters changing at once' },
    'max-failures': {
      type: 'string',
      valueName: 'N|N%',
      default: '0',
      description: 'failed clusters tolerated before the rollout stops',
    },
    soak: {
      type: 'string',
      valueName: 'DURATION',
      default: '5m',
      description: 'every pool must stay Available at the new version with a healthy leader this long',
    },
    'progress-deadline': {
      type: 'string',
      valueName: 'DURATION',
      default: '30m',
      description: 'a cluster not healthy this long after its update fails',
    },
    'auto-rollback': {
      type: 'boolean',
      description: 'on a stop (or a failed cluster) restore the previous spec everywhere it was changed',
    },
    id: {
      type: 'string',
      valueName: 'ID',
      description: 'rollout id (default: rollout-<time>-<random>); re-running with the same id and flags is harmless',
    },
    ...outputFlags,
    ...stateTableFlags,
  },
  details: `
Examples:
  spiritctl rollout start --version 0.2.0 --canary cluster-01 --max-concurrency 25% --max-failures 1 \\
      --soak 10m --progress-deadline 30m --auto-rollback --watch
  spiritctl rollout start --patch '{"agent":{"version":"0.2.1"}}' --selector region=eu --canary 1

The first wave (the canary, or the first clusters) starts at once; later waves start on the next ticks.
Durations: 90s, 5m, 1h30m.
${WATCH_DETAILS}
${STATE_TABLE_DETAILS}`,
  async run({ values }) {
    if (values.version === undefined && values.patch === undefined)
      throw new UsageError('give --version V or --patch JSON (or both)');
    let patch: Record<string, unknown> | undefined;
    if (values.patch !== undefined) {
      const raw = String(values.patch);
      // `@FILE` or inline: either way bounded (a spec patch is a few KB; 256 KB is far beyond any real one).
      const parsed = raw.startsWith('@')
        ? readJsonFile('patch', raw.slice(1), MAX_PATCH_BYTES, 'a spec patch')
        : parseJsonFlag('patch', raw, MAX_PATCH_BYTES);
      // `null` would otherwise be dropped silently and the rollout start without the change asked for.
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new UsageError(
          `--patch: expected a JSON object (a merge patch on spec), got ${JSON.stringify(parsed) ?? typeof parsed}`,
        );
      }
      patch = parsed as Record<string, unknown>;
    }
    const selector = values.selector
      ? Object.fromEntries(
          String(values.selector)
            .split(',')
            .filter(Boolean)
            .map((l) => parseLabel('selector', l)),
        )
      : undefined;
    let canary: string[] | number | undefined;
    if (values.canary !== undefined) {
      const text = String(values.canary);
      canary = /^\d+$/.test(text)
        ? Number(text)
        : text
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
    }
    const ctx = await handlerFor(values);
    try {
      const { defaultRolloutId } = await import('../../functions/rollout/deps.ts');
      const id = (values.id as string | undefined) ?? defaultRolloutId(new Date());
      const rollout = {
        id,
        ...(values.version !== undefined ? { version: String(values.version) } : {}),
        ...(patch ? { patch } : {}),
        ...(selector ? { selector } : {}),
        ...(canary !== undefined ? { canary } : {}),
        maxConcurrency: String(values['max-concurrency'] ?? '1'),
        maxFailures: String(values['max-failures'] ?? '0'),
        soak: String(values.soak ?? '5m'),
        progressDeadline: String(values['progress-deadline'] ?? '30m'),
        autoRollback: values['auto-rollback'] === true,
      };
      let result: RolloutResult;
      try {
        result = await ctx.invoke({ command: 'start', rollout, requestedBy: 'spiritctl' });
      } catch (err) {
        // The rollout's own validation names the field; say it in flag terms.
        const e = err as Error;
        if (e.name === 'RolloutSpecError' || e.name === 'EventValidationError')
          throw new UsageError(validationInFlagTerms(e));
        throw err;
      }
      if (!values.watch && !values.json) process.stdout.write(`started rollout ${result.rollouts[0].rolloutId}\n`);
      return show(ctx, id, values);
    } finally {
      ctx.close();
    }
  },
};

const statusCommand: Command = {
  path: ['rollout', 'status'],
  summary: 'show a rollout per cluster and per pool, with reasons (without ID: list the rollouts)',
  positionals: [{ name: 'ID', description: 'rollout id' }],
  options: { ...outputFlags, ...stateTableFlags },
  details: `${WATCH_DETAILS}\n${STATE_TABLE_DETAILS}`,
  async run({ values, positionals }) {
    const ctx = await handlerFor(values);
    try {
      if (positionals[0]) return await show(ctx, positionals[0], values);
      const { listRollouts } = await import('../../adapters/state-table/rollout-state.ts');
      const { renderRolloutList } = await import('./rollout-view.ts');
      const entries = await listRollouts(ctx.table);
      process.stdout.write(values.json ? `${JSON.stringify(entries)}\n` : renderRolloutList(entries));
      return 0;
    } finally {
      ctx.close();
    }
  },
};

const CONTROL: Record<'pause' | 'resume' | 'abort' | 'rollback', string> = {
  pause: 'hold new waves (clusters already changing are still watched; nothing is undone)',
  resume: 'continue a paused rollout',
  abort: 'stop the rollout for good, undoing nothing',
  rollback: 'restore the previous spec on every cluster the rollout changed',
};

const controlCommands: Command[] = (Object.keys(CONTROL) as (keyof typeof CONTROL)[]).map((command) => ({
  path: ['rollout', command],
  summary: CONTROL[command],
  positionals: [{ name: 'ID', description: 'rollout id', required: true }],
  options: { ...outputFlags, ...stateTableFlags },
  details: `${WATCH_DETAILS}\n${STATE_TABLE_DETAILS}`,
  async run({ values, positionals }) {
    const ctx = await handlerFor(values);
    try {
      const result = await ctx.invoke({ command, rolloutId: positionals[0], requestedBy: 'spiritctl' });
      const r = result.rollouts[0];
      if (!values.json && !values.watch)
        process.stdout.write(`rollout ${r.rolloutId}: ${r.phase}${r.reason ? ` — ${r.reason}` : ''}\n`);
      if (values.json || values.watch) return await show(ctx, positionals[0], values);
      return 0;
    } finally {
      ctx.close();
    }
  },
}));

export const rolloutCommands: Command[] = [startCommand, statusCommand, ...controlCommands];
