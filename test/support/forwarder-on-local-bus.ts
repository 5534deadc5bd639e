import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { KubeConfig } from '@kubernetes/client-node';
import { eventBridgePutEvents } from '../../adapters/eventbridge/put-events.ts';
import { type LocalBus, type LocalBusOptions, startLocalBus } from '../../dev/local/bus/index.ts';
import { type ChangeNotice, changeNoticeDetailSchema } from '../../events/index.ts';
import { Forwarder, type ForwarderOptions } from '../../forwarder/forwarder.ts';
import type { PutEventsPort } from '../../forwarder/sender.ts';

export interface ForwarderOnLocalBus {
  forwarder: Forwarder;
  bus: LocalBus;
  /** Every notice the bus delivered, in order. */
  received: ChangeNotice[];
  stop(): Promise<void>;
}

/**
 * A forwarder for one cluster sending through the AWS SDK to a local bus whose one rule records every notice
 * it delivers; started and synced. `port` may wrap the SDK's PutEvents (to record batches, say).
 */
export async function startForwarderOnLocalBus(opts: {
  kubeConfig: KubeConfig;
  clusterId: string;
  bus?: Omit<LocalBusOptions, 'rules' | 'targets'>;
  port?: (sdk: PutEventsPort) => PutEventsPort;
  forwarder?: Omit<ForwarderOptions, 'clusterId' | 'kubeConfig' | 'bus'>;
}): Promise<ForwarderOnLocalBus> {
  const received: ChangeNotice[] = [];
  const bus = await startLocalBus({
    ...opts.bus,
    rules: [{ name: 'all-notices', pattern: { source: ['pool-spirit.forwarder'] }, target: 'record' }],
    targets: {
      record: async (e) => void received.push(changeNoticeDetailSchema.parse((e as { detail?: unknown }).detail)),
    },
  });
  const client = new EventBridgeClient({
    endpoint: bus.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const sdk = eventBridgePutEvents(client);
  const forwarder = new Forwarder({
    ...opts.forwarder,
    clusterId: opts.clusterId,
    kubeConfig: opts.kubeConfig,
    bus: opts.port ? opts.port(sdk) : sdk,
  });
  forwarder.start();
  await forwarder.synced();
  return {
    forwarder,
    bus,
    received,
    async stop() {
      await forwarder.stop(2_000);
      await bus.stop();
    },
  };
}
