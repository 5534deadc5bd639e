/**
 * A cluster worker thread: hosts some of the local fleet's clusters — each one's API server and storage,
 * sim kubelet, simulated leaders, forwarder and progress watch — started by the very startFleetCluster the
 * main thread uses. It reaches the state table and the bus over loopback, as the function threads do.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createStateTable } from '../../../adapters/state-table/index.ts';
import { localDynamoClient } from '../dynamodb.ts';
import type {
  ClusterWorkerData,
  ClusterWorkerMessage,
  ClusterWorkerRequest,
  StartedCluster,
} from './cluster-worker-protocol.ts';
import { kubeErrorMessage } from './first-errors.ts';
import { type FleetContext, startFleetCluster } from './fleet-cluster.ts';
import type { FleetCluster } from './fleet-types.ts';
import { runApiCall } from './local-api-access.ts';
import { fleetStateDir } from './state-dir.ts';

const port = parentPort!;
const data = workerData as ClusterWorkerData;
const post = (msg: ClusterWorkerMessage) => port.postMessage(msg);

const ctx: FleetContext = {
  opts: data.opts,
  store: data.store,
  state: fleetStateDir(data.opts),
  log: (line) => post({ kind: 'log', line }),
  clusterCa: data.clusterCa,
  table: createStateTable({ client: localDynamoClient(data.dynamoEndpoint), tableName: data.tableName }),
  eventBridge: new EventBridgeClient({
    endpoint: data.busEndpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
  eventBusName: data.eventBusName,
  // The main thread keeps the one first-errors-only filter of the fleet.
  kubeletErrors: {
    report: (clusterId, err) => post({ kind: 'kubeletError', clusterId, message: kubeErrorMessage(err) }),
  },
};

const clusters = new Map<string, FleetCluster>();

async function handle(req: ClusterWorkerRequest): Promise<unknown> {
  if (req.kind === 'start') return start(req.clusterId, req.resumed);
  const c = clusters.get(req.clusterId);
  if (!c) throw new Error(`${req.clusterId} does not run in this cluster thread`);
  switch (req.kind) {
    case 'convergence':
      return c.convergence();
    case 'api':
      if (!c.api) throw new Error(`${c.id} has no local API`);
      return runApiCall(c.api, req.call);
    case 'stopForwarder':
      return c.forwarder.stop(req.deadlineMs);
    case 'forwarderStats':
      return c.forwarder.stats();
    case 'stopClients':
      return c.stopClients();
    case 'stopHost':
      clusters.delete(c.id);
      return c.stopHost();
  }
}

async function start(id: string, resumed: boolean): Promise<StartedCluster> {
  // This cluster's own parts, stopped in reverse if it fails half-way (as the main thread does).
  const parts: (() => Promise<void>)[] = [];
  try {
    const c = await startFleetCluster(ctx, id, resumed, parts);
    clusters.set(id, c);
    return { url: c.url, resumed: c.resumed, kubeconfigPath: c.kubeconfigPath };
  } catch (err) {
    for (const stop of parts.reverse()) await stop().catch(() => undefined);
    throw err;
  }
}

port.on('message', (req: ClusterWorkerRequest) => {
  handle(req).then(
    (result) => post({ kind: 'reply', id: req.id, ok: true, result }),
    (err: unknown) =>
      post({
        kind: 'reply',
        id: req.id,
        ok: false,
        error: { name: (err as Error)?.name ?? 'Error', message: kubeErrorMessage(err) },
      }),
  );
});
