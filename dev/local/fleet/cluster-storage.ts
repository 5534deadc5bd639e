import { startEtcd } from '../etcd/launch.ts';
import { createMemoryStorage, type Storage } from '../kube-api/index.ts';
import { createEtcdStorage } from '../kube-api/storage/etcd.ts';

export interface ClusterStorage {
  storage: Storage;
  /** The etcd client URL (etcd store only). */
  etcdEndpoint?: string;
  /** Closes the storage and stops the etcd it started (its data dir is kept when one was given). */
  stop(): Promise<void>;
}

/**
 * A local cluster's storage: memory, or a private etcd (the pinned build) with its data in `etcdDataDir`
 * (kept, so a restart finds the objects) or, without one, in /dev/shm (removed on stop). One etcd per
 * cluster: each cluster has its own /registry keyspace, as each real cluster has its own etcd.
 */
export async function startClusterStorage(
  store: 'memory' | 'etcd',
  clusterId: string,
  opts: { etcdDataDir?: string; log: (line: string) => void },
): Promise<ClusterStorage> {
  if (store === 'memory') {
    const storage = createMemoryStorage();
    return { storage, stop: () => storage.close() };
  }
  const etcd = await startEtcd({ name: clusterId, dataDir: opts.etcdDataDir });
  let stopping = false;
  void etcd.exited.then((how) => {
    if (!stopping)
      opts.log(`${clusterId} etcd exited (${how}); its API fails until the stack is restarted · log: ${etcd.logFile}`);
  });
  let storage: Storage;
  try {
    storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
  } catch (err) {
    stopping = true;
    await etcd.stop();
    throw err;
  }
  return {
    storage,
    etcdEndpoint: etcd.endpoint,
    async stop() {
      stopping = true;
      await storage.close().catch(() => undefined);
      await etcd.stop();
    },
  };
}
