/**
 * Node and Pod objects that look like an edge pool's: the labels, annotations and status fields kubelets,
 * CNIs and controllers really write, padded to a target JSON size the way real objects get big (a Node's
 * `status.images` list, a Pod's environment and last-applied annotation). Deterministic per index, so
 * runs compare.
 */

export const PROBE_NAMESPACE = 'capacity-probe';
export const PROBE_LABEL = 'probe.poolspirit.io/capacity';
const POOL = 'edge-probe';

type Json = Record<string, unknown>;

function hex(seed: number, length: number): string {
  let out = '';
  let x = (seed * 2654435761) >>> 0;
  while (out.length < length) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
}

export function nodeName(i: number): string {
  return `edge-node-${String(i).padStart(4, '0')}`;
}

export function podName(i: number): string {
  return `workload-${String(i).padStart(5, '0')}-${hex(i, 5)}`;
}

const IMAGES = [
  'registry.k8s.io/kube-proxy:v1.36.3',
  'docker.io/openyurt/yurthub:v1.6.0',
  'docker.io/flannel/flannel:v0.25.6',
  'registry.k8s.io/pause:3.9',
  'registry.k8s.io/coredns/coredns:v1.11.1',
  'docker.io/library/nginx:1.27.2',
  'quay.io/prometheus/node-exporter:v1.8.2',
  'docker.io/eclipse-mosquitto:2.0.20',
] as const;

export function nodeObject(i: number, objectBytes: number): Json {
  const name = nodeName(i);
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const time = '2026-01-01T00:00:00Z';
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: time,
    lastTransitionTime: time,
    reason,
    message,
  });
  const node: Json = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        [PROBE_LABEL]: 'true',
        'apps.openyurt.io/nodepool': POOL,
        'beta.kubernetes.io/arch': 'arm64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'arm64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'edge-gateway-4c8g',
        'openyurt.io/is-edge-worker': 'true',
        'topology.kubernetes.io/region': 'cn-hangzhou',
        'topology.kubernetes.io/zone': `cn-hangzhou-${'abcdefg'[i % 7]}`,
      },
      annotations: {
        'flannel.alpha.coreos.com/backend-data': JSON.stringify({
          VNI: 1,
          VtepMAC: hex(i, 12).replace(/(..)(?!$)/g, '$1:'),
        }),
        'flannel.alpha.coreos.com/backend-type': 'vxlan',
        'flannel.alpha.coreos.com/kube-subnet-manager': 'true',
        'flannel.alpha.coreos.com/public-ip': ip,
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
      },
    },
    spec: { podCIDR: `10.244.${i & 255}.0/24`, podCIDRs: [`10.244.${i & 255}.0/24`], providerID: `edge://${name}` },
    status: {
      capacity: { cpu: '4', 'ephemeral-storage': '61255492Ki', 'hugepages-2Mi': '0', memory: '8024264Ki', pods: '110' },
      allocatable: {
        cpu: '4',
        'ephemeral-storage': '56453061334',
        'hugepages-2Mi': '0',
        memory: '7921864Ki',
        pods: '110',
      },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i, 32),
        systemUUID: hex(i + 7, 32),
        bootID: hex(i + 13, 32),
        kernelVersion: '6.1.0-27-arm64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.22',
        kubeletVersion: 'v1.36.3',
        kubeProxyVersion: 'v1.36.3',
        operatingSystem: 'linux',
        architecture: 'arm64',
      },
      images: [] as Json[],
    },
  };
  // A real edge node's images list is what makes its object large: pad with it.
  const images = (node.status as { images: Json[] }).images;
  for (let k = 0; size(node) < objectBytes; k++) {
    const image = IMAGES[k % IMAGES.length] ?? IMAGES[0];
    images.push({
      names: [`${image.split(':')[0]}@sha256:${hex(i * 131 + k, 64)}`, `${image.replace(/:.*/, '')}:r${k}`],
      sizeBytes: 10_000_000 + ((i * 7919 + k * 104729) % 90_000_000),
    });
  }
  return node;
}

export function podObject(i: number, objectBytes: number, nodes: number): Json {
  const name = podName(i);
  const app = `sensor-gateway-${i % 17}`;
  const env: Json[] = [
    { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
    { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
    { name: 'MQTT_BROKER', value: 'tcp://mosquitto.iot.svc.cluster.local:1883' },
  ];
  const pod: Json = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: PROBE_NAMESPACE,
      labels: {
        [PROBE_LABEL]: 'true',
        app,
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/part-of': 'plant-telemetry',
        'pod-template-hash': hex(i % 17, 10),
      },
      annotations: {
        'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z',
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9102',
      },
    },
    spec: {
      nodeName: nodeName(i % Math.max(1, nodes)),
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      containers: [
        {
          name: 'gateway',
          image: `registry.example.com/plant/${app}:1.${i % 9}.${i % 5}`,
          imagePullPolicy: 'IfNotPresent',
          ports: [
            { name: 'mqtt', containerPort: 1883, protocol: 'TCP' },
            { name: 'metrics', containerPort: 9102, protocol: 'TCP' },
          ],
          env,
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
          readinessProbe: {
            httpGet: { path: '/healthz', port: 9102, scheme: 'HTTP' },
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          volumeMounts: [{ name: 'config', mountPath: '/etc/gateway', readOnly: true }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      volumes: [{ name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } }],
    },
  };
  // Workloads carry their configuration in the environment: pad with it (status is not kept on create).
  for (let k = 0; size(pod) < objectBytes; k++) {
    env.push({
      name: `SENSOR_${String(k).padStart(3, '0')}_ENDPOINT`,
      value: `opc.tcp://plc-${k}.line-${i % 40}.plant.local:4840/${hex(i + k, 24)}`,
    });
  }
  return pod;
}

export function size(obj: unknown): number {
  return Buffer.byteLength(JSON.stringify(obj));
}
