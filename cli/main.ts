import { type Command, helpText, parseCommandArgs, UsageError } from './command.ts';
import { commands } from './commands/index.ts';

function groupHelp(prefix: string[]): string {
  const below = commands.filter((c) => prefix.every((w, i) => c.path[i] === w));
  const lines = [`Usage: spiritctl ${prefix.length ? `${prefix.join(' ')} ` : ''}<command> [flags]`, '', 'Commands:'];
  for (const c of below) lines.push(`  ${c.path.join(' ').padEnd(28)} ${c.summary}`);
  lines.push('', 'Run `spiritctl <command> --help` for the flags of a command.');
  return `${lines.join('\n')}\n`;
}

export async function main(argv: string[]): Promise<number> {
  // The longest command path that prefixes argv wins.
  let match: Command | undefined;
  for (const c of commands) {
    if (c.path.every((w, i) => argv[i] === w) && (!match || c.path.length > match.path.length)) match = c;
  }
  if (!match) {
    const words = argv.filter((a) => !a.startsWith('-'));
    const prefix: string[] = [];
    for (const w of words) {
      if (commands.some((c) => [...prefix, w].every((p, i) => c.path[i] === p))) prefix.push(w);
      else break;
    }
    const wantsHelp = argv.length === 0 || argv.includes('--help') || argv.includes('-h');
    if (wantsHelp || (prefix.length > 0 && prefix.length === words.length)) {
      process.stdout.write(groupHelp(prefix));
      return wantsHelp ? 0 : 2;
    }
    const unknown = words[prefix.length] ?? argv[0];
    process.stderr.write(`spiritctl: unknown command "${[...prefix, unknown].join(' ')}"\n\n${groupHelp(prefix)}`);
    return 2;
  }
  const rest = argv.slice(match.path.length);
  try {
    const parsed = parseCommandArgs(match, rest);
    if ((parsed.values as Record<string, unknown>).help) {
      process.stdout.write(helpText(match));
      return 0;
    }
    const required = (match.positionals ?? []).filter((p) => p.required);
    if (parsed.positionals.length < required.length) {
      throw new UsageError(`missing argument <${required[parsed.positionals.length].name}>`);
    }
    const code = await match.run({ values: parsed.values as Record<string, unknown>, positionals: parsed.positionals });
    return code ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(
        `spiritctl ${match.path.join(' ')}: ${err.message}\nRun \`spiritctl ${match.path.join(' ')} --help\` for usage.\n`,
      );
      return 2;
    }
    process.stderr.write(`spiritctl ${match.path.join(' ')}: ${(err as Error).message}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// Long-running commands keep the event loop alive and set their own exit; one-shot commands exit here.
if (code !== -1) process.exitCode = code;
