/**
 * Benchmark runner: `npm run bench -- <name> [args]` runs dev/bench/<name>.ts, whose `run(args)` returns one
 * JSON-able result; the runner prints it as the only thing on stdout (progress goes to stderr), so
 * scripts can pipe the output straight into a JSON parser.
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../cli/command.ts';

interface BenchModule {
  run(args: string[]): Promise<unknown>;
}

const benchDir = fileURLToPath(new URL('.', import.meta.url));

async function available(): Promise<string[]> {
  return (await readdir(benchDir))
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** Lists names only: importing every benchmark just for its description would load the whole stack. */
async function usage(): Promise<string> {
  const lines = [
    'usage: npm run bench -- <name> [options]',
    '',
    'benchmarks:',
    ...(await available()).map((n) => `  ${n}`),
  ];
  lines.push('', 'Each prints one JSON document on stdout; `npm run bench -- <name> --help` shows its options.');
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    process.stderr.write(`${await usage()}\n`);
    return name ? 0 : 2;
  }
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name) || !(await available()).includes(name)) {
    process.stderr.write(`unknown benchmark "${name}"\n\n${await usage()}\n`);
    return 2;
  }
  const mod = (await import(new URL(`./${name}.ts`, import.meta.url).href)) as Partial<BenchModule>;
  if (typeof mod.run !== 'function') {
    process.stderr.write(`dev/bench/${name}.ts does not export run(args)\n`);
    return 2;
  }
  const result = await mod.run(rest);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A bad flag (the same checks as spiritctl's) names the flag and what it takes.
    if (err instanceof UsageError || (err as { code?: string })?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`bench: ${(err as Error).message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
