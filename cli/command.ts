import {
  type ParseArgsConfig,
  type ParseArgsOptionDescriptor,
  type ParseArgsOptionsConfig,
  parseArgs,
} from 'node:util';

/** A CLI usage error: printed with the command's name, exit code 2. */
export class UsageError extends Error {}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { description: string; valueName?: string };

export interface Command {
  /** Words after `spiritctl`, e.g. ['local', 'cluster']. */
  path: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  /** Extra text for --help (examples, notes). */
  details?: string;
  /** `variadic` (last one only): takes every remaining argument. */
  positionals?: { name: string; description: string; required?: boolean; variadic?: boolean }[];
  run(args: { values: Record<string, unknown>; positionals: string[] }): Promise<number | undefined>;
}

export function helpText(cmd: Command): string {
  const lines = [`spiritctl ${cmd.path.join(' ')} — ${cmd.summary}`, ''];
  const pos = (cmd.positionals ?? []).map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`)).join(' ');
  lines.push(`Usage: spiritctl ${cmd.path.join(' ')}${pos ? ` ${pos}` : ''} [flags]`, '');
  if (cmd.positionals?.length) {
    lines.push('Arguments:');
    for (const p of cmd.positionals) lines.push(`  ${p.name.padEnd(24)} ${p.description}`);
    lines.push('');
  }
  lines.push('Flags:');
  const entries = Object.entries(cmd.options);
  entries.push(['help', { type: 'boolean', description: 'show this help' }]);
  for (const [name, spec] of entries) {
    const flag = `--${name}${spec.type === 'string' ? ` ${spec.valueName ?? 'VALUE'}` : ''}`;
    const def = spec.default !== undefined ? ` (default: ${String(spec.default)})` : '';
    lines.push(`  ${flag.padEnd(32)} ${spec.description}${def}`);
  }
  if (cmd.details) lines.push('', cmd.details.trim());
  return `${lines.join('\n')}\n`;
}

/** Parses argv for one command; unknown flags and missing values become UsageErrors naming the flag. */
export function parseCommandArgs(cmd: Command, argv: string[]) {
  const options: Record<string, OptionSpec> = { ...cmd.options, help: { type: 'boolean', description: '' } };
  // Node 22's parseArgs rejects keys present with an undefined value, so only set ones are passed.
  const parseOptions: ParseArgsOptionsConfig = {};
  for (const [name, spec] of Object.entries(options)) {
    const descriptor: ParseArgsOptionDescriptor = { type: spec.type };
    if (spec.multiple !== undefined) descriptor.multiple = spec.multiple;
    if (spec.short !== undefined) descriptor.short = spec.short;
    if (spec.default !== undefined) descriptor.default = spec.default;
    parseOptions[name] = descriptor;
  }
  try {
    return parseArgs({ args: argv, options: parseOptions, allowPositionals: true, strict: true });
  } catch (err) {
    const message = (err as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    throw new UsageError(message);
  }
}

/** Parses an integer flag, naming the flag and the accepted range when it is not one. */
export function intFlag(name: string, raw: unknown, min: number, max: number): number {
  const text = String(raw);
  if (!/^-?\d+$/.test(text))
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  const n = Number(text);
  if (n < min || n > max) throw new UsageError(`--${name} must be from ${min} to ${max}, got ${n}`);
  return n;
}

/** Parses a flag that takes one of a fixed set of values. */
export function choiceFlag<T extends string>(name: string, raw: unknown, choices: readonly T[]): T {
  const text = String(raw);
  if (!(choices as readonly string[]).includes(text)) {
    throw new UsageError(`--${name} must be one of ${choices.join('|')}, got "${text}"`);
  }
  return text as T;
}
