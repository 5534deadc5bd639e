/** Messages between the local fleet and its cluster worker threads (structured-clone safe). */
import type { ClusterCa } from './cluster-ca.ts';
import type { LocalFleetOptions } from './fleet-types.ts';
import type { LocalApiCall } from './local-api-access.ts';

/** The fleet's options a cluster thread needs: the data, not the callbacks, which stay on the main thread. */
export type ClusterThreadOptions = Omit<LocalFleetOptions, 'log' | 'onBusActivity'>;

export interface ClusterWorkerData {
  opts: ClusterThreadOptions;
  store: 'memory' | 'etcd';
  clusterCa: ClusterCa;
  /** The state table and the bus, reached over loopback as the functions reach them. */
  dynamoEndpoint: string;
  tableName: string;
  busEndpoint: string;
  eventBusName: string;
}

export type ClusterWorkerRequest = { id: number; clusterId: string } & (
  | { kind: 'start'; resumed: boolean }
  | { kind: 'convergence' }
  | { kind: 'api'; call: LocalApiCall }
  | { kind: 'stopForwarder'; deadlineMs?: number }
  | { kind: 'forwarderStats' }
  | { kind: 'stopClients' }
  | { kind: 'stopHost' }
);

/** What the main thread needs of a cluster started in a worker to build its FleetCluster. */
export interface StartedCluster {
  url: string;
  resumed: boolean;
  kubeconfigPath: string;
}

export type ClusterWorkerMessage =
  | { kind: 'reply'; id: number; ok: true; result: unknown }
  | { kind: 'reply'; id: number; ok: false; error: { name: string; message: string } }
  | { kind: 'log'; line: string }
  | { kind: 'kubeletError'; clusterId: string; message: string };
