import { createServer } from 'node:http';
import { type Command, intFlag, UsageError } from '../command.ts';

export const forwarderCommand: Command = {
  path: ['forwarder'],
  summary: "forward one cluster's NodePool, PoolSpirit, workload and Node changes to the event bus",
  options: {
    'cluster-id': { type: 'string', valueName: 'ID', description: "the cluster's id in the registry (required)" },
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'kubeconfig of the cluster (default: in-cluster service account)',
    },
    'event-bus': {
      type: 'string',
      valueName: 'NAME',
      description: "EventBridge bus name (default: the account's default bus)",
    },
    'bus-endpoint': {
      type: 'string',
      valueName: 'URL',
      description: 'EventBridge endpoint override, e.g. the local bus',
    },
    region: { type: 'string', valueName: 'REGION', description: 'AWS region (default: from the environment)' },
    namespace: {
      type: 'string',
      default: 'pool-spirit-system',
      valueName: 'NS',
      description: 'namespace of the pool-spirit workloads',
    },
    'metrics-port': {
      type: 'string',
      default: '9090',
      valueName: 'PORT',
      description: 'serve /metrics and /healthz here (0 = any free port)',
    },
  },
  details: 'Runs until SIGTERM/SIGINT, then flushes every notice it holds before exiting.',
  async run({ values }) {
    const clusterId = values['cluster-id'] as string | undefined;
    if (!clusterId) throw new UsageError('--cluster-id is required');
    const port = intFlag('metrics-port', values['metrics-port'], 0, 65535);
    // Imported here so other spiritctl commands do not load the AWS SDK and the Kubernetes client.
    const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { eventBridgePutEvents } = await import('../../adapters/eventbridge/put-events.ts');
    const { Forwarder } = await import('../../forwarder/forwarder.ts');
    const { prometheusText } = await import('../../forwarder/metrics.ts');
    const kubeConfig = new KubeConfig();
    if (values.kubeconfig) kubeConfig.loadFromFile(values.kubeconfig as string);
    else kubeConfig.loadFromCluster();
    const endpoint = values['bus-endpoint'] as string | undefined;
    const client = new EventBridgeClient({
      ...(endpoint ? { endpoint } : {}),
      ...(values.region ? { region: values.region as string } : {}),
    });
    const forwarder = new Forwarder({
      clusterId,
      kubeConfig,
      bus: eventBridgePutEvents(client),
      eventBusName: values['event-bus'] as string | undefined,
      namespace: values.namespace as string,
      // A notice the bus refuses for good is said once, as a JSON line, and counted in /metrics.
      sender: {
        onRejected: (r) =>
          process.stderr.write(
            `${JSON.stringify({ level: 'error', message: 'notice refused by the bus; not re-sent', ...r })}\n`,
          ),
      },
    });
    forwarder.start();
    const server = createServer((req, res) => {
      if (req.url === '/metrics')
        res
          .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
          .end(prometheusText(clusterId, forwarder.stats()));
      else if (req.url === '/healthz') res.writeHead(200).end('ok');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(port, resolve));
    const address = server.address();
    process.stdout.write(
      `forwarder for ${clusterId} ready; metrics on :${typeof address === 'object' && address ? address.port : port}/metrics\n`,
    );
    const stop = async () => {
      const left = await forwarder.stop(10_000);
      server.close();
      process.stdout.write(`forwarder stopped; ${left} notice(s) unsent\n`);
      process.exit(left === 0 ? 0 : 1);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
    return -1;
  },
};
