import type { Command } from '../command.ts';
import { eventsCommands } from './events.ts';
import { localClusterCommand } from './local-cluster.ts';
import { localUp } from './local-up.ts';
import { forwarderCommand } from './forwarder.ts';

/** Every subcommand of spiritctl. Add new commands here. */
export const commands: Command[] = [localClusterCommand];
commands.push(...eventsCommands);
commands.push(localUp, forwarderCommand);
