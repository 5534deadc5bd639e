/**
 * Creates the bootstrap ClusterRoles and ClusterRoleBindings that are missing, as kube-apiserver's
 * rbac/bootstrap-roles post-start hook does. Existing objects are left alone (kube would also add rules
 * missing from `autoupdate` roles; a restart on an etcd that already holds them keeps what is there).
 */
import { ApiError } from '../server/errors.ts';
import type { ObjectStore } from '../server/store.ts';
import { BOOTSTRAP_CLUSTER_ROLE_BINDINGS, BOOTSTRAP_CLUSTER_ROLES } from './bootstrap-policy.ts';
import type { RbacPolicyCache } from './rbac-policy.ts';

export async function seedBootstrapPolicy(store: ObjectStore, policy: RbacPolicyCache): Promise<void> {
  const targets = [
    { info: policy.info('clusterroles'), objects: BOOTSTRAP_CLUSTER_ROLES },
    { info: policy.info('clusterrolebindings'), objects: BOOTSTRAP_CLUSTER_ROLE_BINDINGS },
  ];
  for (const { info, objects } of targets) {
    for (const obj of objects) {
      if (await store.get(info, undefined, obj.metadata.name)) continue;
      await store.create(info, undefined, structuredClone(obj), { fieldManager: 'kube-apiserver' }).catch((err) => {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
      });
    }
  }
}
