import type { KubeObject } from '../kube.ts';
import { APISERVER_PORT, SERVICE_PORT } from './layout.ts';
import type { ObjectNames } from './names.ts';
import { selectorLabels } from './workload.ts';

/**
 * The pool-spirit apiserver's Service: 443 → the secure port. etcd is not exposed: its only clients (the
 * apiserver and the agent) share the pod and reach it on 127.0.0.1, so nothing outside the pod can.
 */
export function renderService(names: ObjectNames, namespace: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: names.base, namespace, labels },
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(names),
      ports: [{ name: 'https', port: SERVICE_PORT, targetPort: APISERVER_PORT, protocol: 'TCP' }],
    },
  };
}

export function endpointFor(names: ObjectNames, namespace: string, clusterDomain: string): string {
  return `https://${names.base}.${namespace}.svc.${clusterDomain}:${SERVICE_PORT}`;
}
