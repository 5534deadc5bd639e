/**
 * What the reconcile does in kube-system for yurt-coordinator compat pools (functions/yurt-coordinator/), and so the exact Role of the opt-in component
 * infra/cluster/components/yurt-coordinator-compat (test/infra/cluster/components/yurt-coordinator-compat.test.ts compares them).
 *
 * Every use names its objects: the install creates them with fixed names, so the reconciler needs neither
 * `create` (which RBAC cannot bound by name) nor `list` or `delete`. Server-side apply of an object that
 * exists is a `patch`.
 */
import {
  APISERVER_SERVICE,
  CERTS_SECRET,
  COORDINATOR_NAMESPACE,
  COORDINATOR_SLICES,
  ETCD_SERVICE,
} from '../yurt-coordinator/index.ts';
import type { ApiUse } from './reconciler-permissions.ts';

export function compatApiUses(): ApiUse[] {
  const namespace = COORDINATOR_NAMESPACE;
  return [
    {
      by: 'reconcile',
      apiGroup: '',
      resource: 'secrets',
      namespace,
      resourceNames: [CERTS_SECRET],
      verbs: ['get', 'patch'],
      why: 'functions/yurt-coordinator/cluster-objects.ts: read the certs Secret (its resourceVersion), apply its data on that version',
    },
    {
      by: 'reconcile',
      apiGroup: 'discovery.k8s.io',
      resource: 'endpointslices',
      namespace,
      resourceNames: COORDINATOR_SLICES.map((s) => s.name),
      verbs: ['get', 'patch'],
      why: 'functions/yurt-coordinator/cluster-objects.ts: read each slice (its resourceVersion), apply its endpoints on that version',
    },
    {
      by: 'reconcile',
      apiGroup: '',
      resource: 'services',
      namespace,
      resourceNames: [APISERVER_SERVICE, ETCD_SERVICE],
      verbs: ['get'],
      why: "functions/yurt-coordinator/compat-input.ts: the Services' ClusterIPs, which the compat pools' serving certificates name",
    },
  ];
}
