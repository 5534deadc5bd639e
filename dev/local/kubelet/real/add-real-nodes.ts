/**
 * `spiritctl local nodes add --kubelet real`: real nodes for a NodePool of a running `local up --control-plane
 * real --kubelet real` stack, from another process. It reaches the cluster through the admin kubeconfig the
 * stack wrote and signs each node's system:node certificate with the clusters' CA the stack keeps in
 * <state-dir>/pki (mode 0600). The nodes run in the calling process, until it stops them.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { RawObjectApi } from '../../../../adapters/kubernetes/raw-object-api.ts';
import { nodePoolCollectionPath } from '../../../../forwarder/watched-resources.ts';
import { NoSuchPoolError } from '../../fleet/add-nodes.ts';
import { clusterAuthority, loadOrCreateClusterCa } from '../../fleet/cluster-ca.ts';
import { nodeName } from '../../fleet/seed.ts';
import { kubeconfigYaml } from '../../kube-api/index.ts';
import { issueClientCertificate } from '../../pki.ts';
import { startPoolNodes } from './pool-nodes.ts';
import type { RealNode } from './real-node.ts';

type NamedList = { items?: Array<{ metadata?: { name?: string } }> };

export interface AddRealNodesOptions {
  clusterId: string;
  kubeconfigPath: string;
  /** The stack's CA directory (<state-dir>/pki). */
  pkiDir: string;
  pool: string;
  count: number;
  log?: (line: string) => void;
}

export async function addRealPoolNodes(opts: AddRealNodesOptions): Promise<RealNode[]> {
  if (!existsSync(join(opts.pkiDir, 'ca.key')))
    throw new Error(
      `no cluster CA in ${opts.pkiDir}: real nodes join a stack started with \`local up --control-plane real --kubelet real\` (it keeps the CA there)`,
    );
  const ca = clusterAuthority(await loadOrCreateClusterCa(opts.pkiDir));
  const admin = new KubeConfig();
  admin.loadFromFile(opts.kubeconfigPath);
  const url = admin.getCurrentCluster()?.server ?? '';
  const api = RawObjectApi.fromKubeConfig(admin);
  const pools = await api.requestJson<NamedList>(HttpMethod.GET, await nodePoolCollectionPath(api));
  const poolNames = (pools.items ?? []).map((p) => String(p.metadata?.name));
  if (!poolNames.includes(opts.pool)) throw new NoSuchPoolError(opts.pool, poolNames);
  const nodes = await api.requestJson<NamedList>(HttpMethod.GET, '/api/v1/nodes');
  const taken = new Set((nodes.items ?? []).map((n) => String(n.metadata?.name)));
  const names: string[] = [];
  for (let j = 0; names.length < opts.count; j++)
    if (!taken.has(nodeName(opts.pool, j))) names.push(nodeName(opts.pool, j));
  return startPoolNodes({
    controlPlane: {
      url,
      caPem: ca.certPem,
      async writeKubeconfig(path, identity) {
        const cert = await issueClientCertificate(ca, identity);
        await writeFile(path, kubeconfigYaml(opts.clusterId, url, { caPem: ca.certPem, identity: cert }), {
          mode: 0o600,
        });
      },
    },
    admin,
    nodes: names.map((name) => ({ name, pool: opts.pool })),
    ...(opts.log ? { log: opts.log } : {}),
  });
}
