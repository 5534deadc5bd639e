import type { Command } from '../command.ts';
import { eventsCommands } from './events.ts';
import { forwarderCommand } from './forwarder.ts';
import { localClusterCommand } from './local-cluster.ts';
import { localNodesAddCommand } from './local-nodes.ts';
import { localUp } from './local-up.ts';
import { probeCapacityCommand } from './probe-capacity.ts';
import { probeLeadersCommand } from './probe-leaders.ts';

/** Every subcommand of spiritctl. Add new commands here. */
export const commands: Command[] = [localClusterCommand];
commands.push(...eventsCommands);
commands.push(localUp, localNodesAddCommand, forwarderCommand);

import { auditCommand } from './audit.ts';
import { clustersCommands } from './clusters.ts';

commands.push(...clustersCommands, auditCommand);
commands.push(probeCapacityCommand, probeLeadersCommand);

import { rolloutCommands } from './rollout.ts';

commands.push(...rolloutCommands);

import { costCommand } from './cost.ts';

commands.push(costCommand);

import { costLimitsCommand } from './cost-limits.ts';

commands.push(costLimitsCommand);
