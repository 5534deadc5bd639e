/**
 * Every served built-in kind survives JSON → protobuf (protobufjs) → decodeKubeProtobuf unchanged,
 * including the apimachinery types with a JSON form of their own and Go-pointer fields set to zero.
 */
import { describe, expect, it } from 'vitest';
import { decodeKubeProtobuf } from '../../../../../dev/local/kube-api/protobuf/decode.ts';
import { encodeKubeProtobuf } from './encode.ts';

const metadata = {
  name: 'sample',
  namespace: 'ns1',
  uid: '7a1b1e0e-0000-4000-8000-000000000001',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2025-01-02T03:04:05Z',
  labels: { app: 'web', 'example.com/tier': '' },
  annotations: { note: 'a "quoted" value' },
  finalizers: ['example.com/cleanup'],
  ownerReferences: [
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-1',
      uid: 'u-1',
      controller: true,
      blockOwnerDeletion: false,
    },
  ],
  managedFields: [
    {
      manager: 'kubectl',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2025-01-02T03:04:05Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    },
  ],
};

const SAMPLES: Record<string, Record<string, unknown> & { apiVersion: string; kind: string }> = {
  Namespace: {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'ns1', labels: { team: 'a' } },
    spec: { finalizers: ['kubernetes'] },
  },
  ConfigMap: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata,
    data: { 'app.conf': 'x=1\n', empty: '' },
    binaryData: { blob: 'AAEC/w==' },
    immutable: false,
  },
  Secret: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata,
    type: 'Opaque',
    data: { key: 'AP8Q', empty: '' },
    immutable: true,
  },
  ServiceAccount: {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata,
    automountServiceAccountToken: false,
    secrets: [{ name: 'tok' }],
    imagePullSecrets: [{ name: 'pull' }],
  },
  Node: {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'worker-1', labels: { 'kubernetes.io/hostname': 'worker-1' } },
    spec: {
      unschedulable: true,
      podCIDR: '10.0.0.0/24',
      taints: [{ key: 'dedicated', value: 'edge', effect: 'NoSchedule', timeAdded: '2025-01-02T03:04:05Z' }],
    },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      allocatable: { cpu: '3800m', memory: '15Gi' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: '2025-01-02T03:04:05Z',
          lastTransitionTime: '2025-01-01T00:00:00Z',
          reason: 'KubeletReady',
        },
      ],
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      nodeInfo: {
        machineID: 'm',
        systemUUID: 's',
        bootID: 'b',
        kernelVersion: '6.1',
        osImage: 'Debian',
        containerRuntimeVersion: 'containerd://1.7',
        kubeletVersion: 'v1.32.0',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  },
  Pod: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      nodeName: 'worker-1',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 0,
      securityContext: { runAsUser: 0, runAsNonRoot: false, fsGroup: 2000, supplementalGroups: [1, 2] },
      containers: [
        {
          name: 'app',
          image: 'nginx:1.27',
          command: ['nginx'],
          args: ['-g', 'daemon off;'],
          ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
          env: [
            { name: 'A' },
            { name: 'B', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'b', optional: false } } },
          ],
          resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 80 } },
          securityContext: { privileged: false, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
          volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true }],
        },
      ],
      volumes: [{ name: 'cfg', configMap: { name: 'cfg', defaultMode: 420, items: [{ key: 'a', path: 'a.txt' }] } }],
      tolerations: [
        { key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule', tolerationSeconds: 30 },
      ],
    },
    status: { phase: 'Running', podIP: '10.0.0.9', startTime: '2025-01-02T03:04:05Z' },
  },
  Service: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP', nodePort: 30080 },
        { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ],
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      sessionAffinity: 'ClientIP',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      allocateLoadBalancerNodePorts: false,
    },
  },
  Event: {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'web.1812', namespace: 'ns1' },
    involvedObject: {
      kind: 'Pod',
      namespace: 'ns1',
      name: 'web',
      uid: 'u-2',
      apiVersion: 'v1',
      fieldPath: 'spec.containers{app}',
    },
    reason: 'Pulled',
    message: 'Successfully pulled image',
    source: { component: 'kubelet', host: 'worker-1' },
    firstTimestamp: '2025-01-02T03:04:05Z',
    lastTimestamp: '2025-01-02T03:05:05Z',
    count: 2,
    type: 'Normal',
    eventTime: '2025-01-02T03:04:05.123456Z',
    reportingComponent: 'kubelet',
    reportingInstance: 'worker-1',
  },
  Deployment: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 0,
      revisionHistoryLimit: 0,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }],
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'nginx', resources: {} }] },
      },
      paused: true,
    },
    status: {
      observedGeneration: 3,
      replicas: 2,
      readyReplicas: 1,
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastUpdateTime: '2025-01-02T03:04:05Z',
          lastTransitionTime: '2025-01-02T03:04:05Z',
        },
      ],
    },
  },
  Role: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'], resourceNames: ['a'] }],
  },
  RoleBinding: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'ns1' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
  },
  ClusterRole: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'agg' },
    rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate': 'true' } }] },
  },
  ClusterRoleBinding: {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'crb' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'ops' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'agg' },
  },
  Lease: {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'leader', namespace: 'ns1' },
    spec: {
      holderIdentity: 'pod-a_1234',
      leaseDurationSeconds: 15,
      acquireTime: '2025-01-02T03:04:05.000001Z',
      renewTime: '2025-01-02T03:04:20.500000Z',
      leaseTransitions: 0,
    },
  },
};

describe('protobuf round trip of the served built-in kinds', () => {
  for (const [kind, object] of Object.entries(SAMPLES)) {
    it(kind, () => {
      const decoded = decodeKubeProtobuf(encodeKubeProtobuf(object));
      expect(decoded.apiVersion).toBe(object.apiVersion);
      expect(decoded.kind).toBe(kind);
      expect(decoded.object).toEqual(object);
    });
  }
});
