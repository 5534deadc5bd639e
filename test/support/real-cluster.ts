/**
 * The built control plane for an end-to-end test (dev/local/real-cluster): etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler with a CA of the test's own, reached as the cluster admin, the
 * CRDs applied unless asked not to. The same access shape as the local API's test cluster, so a suite moves
 * between them by the function it starts.
 */

import { RawObjectApi } from '../../adapters/kubernetes/raw-object-api.ts';
import { createCertificateAuthority } from '../../dev/local/pki.ts';
import {
  type RealHostCluster,
  type StartRealHostClusterOptions,
  startRealHostCluster,
} from '../../dev/local/real-cluster/control-plane.ts';
import { applyCrds, type TestClusterAccess } from './local-cluster.ts';

export interface RealTestCluster extends TestClusterAccess {
  real: RealHostCluster;
}

export async function startRealTestCluster(
  opts: { name?: string; crds?: boolean } & Pick<
    StartRealHostClusterOptions,
    'extraApiServerArgs' | 'auditLog' | 'controllers'
  > = {},
): Promise<RealTestCluster> {
  const name = opts.name ?? 'e2e';
  const ca = await createCertificateAuthority(`${name}-cluster-ca`);
  const real = await startRealHostCluster({ ...opts, name, ca });
  try {
    const api = RawObjectApi.fromKubeConfig(real.kubeConfig);
    if (opts.crds !== false) await applyCrds(api);
    return { real, kubeconfigPath: real.kubeconfigPath, kc: real.kubeConfig, api, stop: () => real.stop() };
  } catch (err) {
    await real.stop();
    throw err;
  }
}
