import { stableHash } from '../hash.ts';
import type { KubeObject } from '../kube.ts';
import type { NodePool } from '../nodepool.ts';
import { NODE_POOL_LABEL } from '../nodepool.ts';
import { agentContainer, apiServerContainer, type ContainerContext, etcdContainer, VOLUMES } from './containers.ts';
import { COMPONENT_LABEL, INSTANCE_LABEL, NAME_LABEL } from './labels.ts';
import { RUN_AS_USER } from './layout.ts';
import type { ObjectNames } from './names.ts';
import { certFile, keyFile, PKI_FILES } from './pki.ts';

export const ANNOTATIONS = {
  pkiHash: 'poolspirit.io/pki-hash',
  configHash: 'poolspirit.io/config-hash',
  bundle: 'poolspirit.io/bundle-version',
  apiServerVersion: 'poolspirit.io/apiserver-version',
  etcdVersion: 'poolspirit.io/etcd-version',
  agentVersion: 'poolspirit.io/agent-version',
} as const;

/**
 * How long the pod stays on a node the cloud lost before it is evicted and rescheduled in the pool. Bounded
 * on purpose: upstream tolerated every NoExecute taint forever, so a pool-coordinator on a dead node never
 * moved (openyurt#1212). Long enough to ride out a short blip (the default-toleration admission uses 300 s
 * for ordinary pods; a pool-spirit restart costs a re-seed, so a little patience is right, but a pool with
 * no pool-spirit loses its leader election).
 */
export const LOST_NODE_TOLERATION_SECONDS = 120;

export function selectorLabels(names: ObjectNames): Record<string, string> {
  return { [NAME_LABEL]: 'pool-spirit', [INSTANCE_LABEL]: names.base };
}

export function podTolerations(nodePool: NodePool): Array<Record<string, unknown>> {
  const lost = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: LOST_NODE_TOLERATION_SECONDS,
  }));
  // The pool's own taints are on every node of the pool by definition: tolerate exactly those.
  const pool = (nodePool.spec?.taints ?? []).map((t) => ({
    key: t.key,
    operator: 'Equal',
    value: t.value ?? '',
    effect: t.effect,
  }));
  return [...lost, ...pool];
}

export interface WorkloadInput extends ContainerContext {
  names: ObjectNames;
  nodePool: NodePool;
  labels: Record<string, string>;
  pkiHash: string;
}

/**
 * The pool-spirit Deployment. One replica, Recreate: two pods would mean two etcds and two YurtHub
 * elections. Pod-template annotations carry the hash of what a running pod cannot reload (its CAs, its
 * service account keys) and the configuration hash, so a new CA or a changed flag rolls the pod, while a
 * renewed leaf certificate reaches it through the Secret volume; the version annotations say what a pod runs.
 *
 * priorityClassName system-cluster-critical: it must win against ordinary workloads on a full edge node
 * (without it the pool loses leader election), but not against node-critical pods (CNI, kube-proxy,
 * YurtHub) that it depends on itself; upstream's system-node-critical put it above those.
 */
export function renderDeployment(input: WorkloadInput): KubeObject {
  const { names, spec } = input;
  const containers = [apiServerContainer(input), etcdContainer(input), agentContainer(input)];
  const selector = selectorLabels(names);
  const volumes = [
    {
      name: VOLUMES.apiserverPki,
      secret: {
        secretName: names.pkiSecret,
        defaultMode: 0o440,
        items: [
          PKI_FILES.etcdCaCert,
          'client-ca.crt',
          certFile('apiserver'),
          keyFile('apiserver'),
          certFile('apiserver-etcd-client'),
          keyFile('apiserver-etcd-client'),
          PKI_FILES.saPublic,
          PKI_FILES.saPrivate,
        ].map((key) => ({ key, path: key })),
      },
    },
    {
      name: VOLUMES.etcdPki,
      secret: {
        secretName: names.pkiSecret,
        defaultMode: 0o440,
        items: [
          PKI_FILES.etcdCaCert,
          certFile('etcd-server'),
          keyFile('etcd-server'),
          certFile('etcd-peer'),
          keyFile('etcd-peer'),
        ].map((key) => ({ key, path: key })),
      },
    },
    { name: VOLUMES.etcdData, emptyDir: { medium: spec.etcd.storage.medium, sizeLimit: spec.etcd.storage.sizeLimit } },
    {
      name: VOLUMES.agentKubeconfig,
      secret: { secretName: names.agentSecret, defaultMode: 0o440, items: [{ key: 'kubeconfig', path: 'kubeconfig' }] },
    },
    {
      name: VOLUMES.agentEtcdClient,
      secret: {
        secretName: names.pkiSecret,
        defaultMode: 0o440,
        items: [PKI_FILES.etcdCaCert, certFile('apiserver-etcd-client'), keyFile('apiserver-etcd-client')].map(
          (key) => ({ key, path: key }),
        ),
      },
    },
    {
      // The ServiceAccount token goes to the agent only (automount would give it to every container).
      name: VOLUMES.agentToken,
      projected: {
        defaultMode: 0o440,
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
      },
    },
  ];
  const configHash = hashOf({ containers, volumes });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: names.base, namespace: input.namespace, labels: { ...input.labels, ...selector } },
    spec: {
      replicas: 1,
      revisionHistoryLimit: 3,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: { ...input.labels, ...selector, [COMPONENT_LABEL]: 'control-plane' },
          annotations: {
            [ANNOTATIONS.pkiHash]: input.pkiHash,
            [ANNOTATIONS.configHash]: configHash,
            [ANNOTATIONS.bundle]: spec.version,
            [ANNOTATIONS.apiServerVersion]: spec.apiServer.version,
            [ANNOTATIONS.etcdVersion]: spec.etcd.version,
            [ANNOTATIONS.agentVersion]: spec.agent.version,
          },
        },
        spec: {
          serviceAccountName: names.base,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          hostNetwork: input.hostNetwork,
          dnsPolicy: input.hostNetwork ? 'ClusterFirstWithHostNet' : 'ClusterFirst',
          priorityClassName: 'system-cluster-critical',
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUN_AS_USER,
            runAsGroup: RUN_AS_USER,
            fsGroup: RUN_AS_USER,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: NODE_POOL_LABEL, operator: 'In', values: [spec.nodePool] }] },
                ],
              },
            },
          },
          tolerations: podTolerations(input.nodePool),
          containers,
          volumes,
        },
      },
    },
  };
}

function hashOf(value: unknown): string {
  return stableHash(value).slice(0, 16);
}
