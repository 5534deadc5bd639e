import type { Command } from '../command.ts';

/** Every subcommand of spiritctl. Add new commands here. */
export const commands: Command[] = [];
