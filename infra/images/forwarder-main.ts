/**
 * Entry of the forwarder image: `spiritctl forwarder` on its own, so the bundle holds the forwarder, the
 * Kubernetes client and the EventBridge client — not the local stack or the other commands. Arguments are
 * the command's flags (the Deployment passes --cluster-id, --event-bus, --namespace, --metrics-port).
 * Bundled by esbuild in infra/images/forwarder.Dockerfile.
 */
import { helpText, parseCommandArgs, UsageError } from '../../cli/command.ts';
import { forwarderCommand } from '../../cli/commands/forwarder.ts';

async function main(argv: string[]): Promise<number> {
  try {
    const parsed = parseCommandArgs(forwarderCommand, argv);
    if ((parsed.values as Record<string, unknown>).help) {
      process.stdout.write(helpText(forwarderCommand));
      return 0;
    }
    return (
      (await forwarderCommand.run({
        values: parsed.values as Record<string, unknown>,
        positionals: parsed.positionals,
      })) ?? 0
    );
  } catch (err) {
    process.stderr.write(`forwarder: ${(err as Error).message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

const code = await main(process.argv.slice(2));
// -1: running until a signal; the command sets the exit code itself when it stops.
if (code !== -1) process.exitCode = code;
