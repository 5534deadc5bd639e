import type { KubeObject } from '../kube.ts';
import { compatLabels, renderCoordinatorServices } from './cluster-objects.ts';
import { CERTS_SECRET, COORDINATOR_NAMESPACE } from './contract.ts';
import { COORDINATOR_SLICES, SERVICE_NAME_LABEL, SLICE_MANAGED_BY_LABEL, SLICE_MANAGER } from './endpoint-slices.ts';

/** Where the install objects and the functions' Role ship: what a status condition tells the operator to apply. */
export const COMPAT_COMPONENT_PATH = 'infra/cluster/components/yurt-coordinator-compat';

/**
 * The kube-system objects installed once, by the operator, for a cluster that uses compat pools
 * (infra/cluster/components/yurt-coordinator-compat, checked against this by test/infra): the certs Secret
 * with no data, the two Services in full, and the two EndpointSlices with no endpoints. The reconciler may
 * only get and patch these names (RBAC cannot bound `create` by name, so it never creates them); it fills
 * the Secret's data and the slices' endpoints and ports.
 *
 * The slices leave `endpoints` out rather than empty: kube-apiserver accepts that, and an empty list would
 * be the installer's field, so re-applying the install (`kubectl apply --server-side`) would conflict with
 * the reconciler's endpoints, or with --force-conflicts empty them.
 */
export function compatInstallObjects(): KubeObject[] {
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CERTS_SECRET, namespace: COORDINATOR_NAMESPACE, labels: compatLabels() },
    type: 'Opaque',
  };
  const slices = COORDINATOR_SLICES.map(
    ({ name, service }): KubeObject => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace: COORDINATOR_NAMESPACE,
        labels: { ...compatLabels(), [SERVICE_NAME_LABEL]: service, [SLICE_MANAGED_BY_LABEL]: SLICE_MANAGER },
      },
      addressType: 'IPv4',
    }),
  );
  return [secret, ...renderCoordinatorServices(), ...slices];
}
