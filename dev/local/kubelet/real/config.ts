/**
 * What a real node runs with: containerd's config, the CNI network, the kubelet's KubeletConfiguration and
 * flags. Pure: a layout in, files and args out, so a test can read what runs without starting it.
 *
 * The choices, and why:
 *  - containerd: its own root, state and socket under the node's directory, so nodes never share images,
 *    containers or sandboxes (a kubelet removes every pod sandbox it does not know). `restrict_oom_score_adj`:
 *    the pod's processes cannot lower their OOM score below the node's, and without it runc 1.1 fails
 *    ("can't get final child's PID from pipe") when run by a containerd that is itself not at -999.
 *  - cgroupfs, not systemd: there is no systemd here. The kubelet's cgroups live under a root of their own
 *    per node (`cgroupRoot`), since a kubelet removes pod cgroups it does not know about.
 *  - CNI: a bridge inside the node's own network namespace (node-network.ts), never the machine's: pods
 *    get addresses only there, reach the node through the bridge's gateway, and nothing else.
 *  - The kubelet authenticates to the control plane with a client certificate for system:node:<name> (no
 *    TLS bootstrap), so the Node authorizer and NodeRestriction judge it as any kubelet. Its own server
 *    (logs, exec) is reachable only inside the node's namespace.
 *  - No eviction thresholds: the machine is shared with other work; a disk or memory pressure eviction would
 *    be about the machine, not the pod.
 */
export interface RealNodeLayout {
  /** The node's directory: every path below lives in it. */
  dir: string;
  nodeName: string;
  pool: string;
  /** The node's address inside its namespace (on its loopback): the Node's InternalIP. */
  nodeIp: string;
  /** The pods' subnet (a /24 on the node's bridge). */
  podSubnet: string;
  /** containerd's sandbox ("pause") image. */
  sandboxImage: string;
  /** The kubelet's cgroup root (created in every v1 hierarchy before it starts). */
  cgroupRoot: string;
}

export const CNI_BIN_DIR = '/usr/lib/cni';
export const RUNC = '/usr/sbin/runc';
/** The OpenYurt label that puts a node in a NodePool (what the pool-spirit's node affinity selects). */
export const NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';

export function nodePaths(dir: string) {
  return {
    containerdConfig: `${dir}/containerd/config.toml`,
    containerdRoot: `${dir}/containerd/root`,
    containerdState: `${dir}/containerd/state`,
    containerdSocket: `${dir}/containerd/containerd.sock`,
    cniConfDir: `${dir}/cni/net.d`,
    cniDataDir: `${dir}/cni/ipam`,
    kubeletRoot: `${dir}/kubelet`,
    kubeletCertDir: `${dir}/kubelet-pki`,
    kubeletConfig: `${dir}/kubelet-config.yaml`,
    kubeconfig: `${dir}/kubelet.kubeconfig`,
    caCert: `${dir}/ca.crt`,
  };
}

export function containerdConfig(l: RealNodeLayout): string {
  const p = nodePaths(l.dir);
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${JSON.stringify(p.containerdRoot)}
state = ${JSON.stringify(p.containerdState)}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${JSON.stringify(p.containerdSocket)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${JSON.stringify(`${l.dir}/containerd/opt`)}

[${cri}]
  sandbox_image = ${JSON.stringify(l.sandboxImage)}
  restrict_oom_score_adj = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  BinaryName = ${JSON.stringify(RUNC)}

[${cri}.cni]
  bin_dir = ${JSON.stringify(CNI_BIN_DIR)}
  conf_dir = ${JSON.stringify(p.cniConfDir)}
  max_conf_num = 1
`;
}

/** One bridge in the node's namespace, its gateway the pods' default route; no masquerade (nothing beyond it). */
export function cniConfig(l: RealNodeLayout): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'pool-spirit-node',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: l.podSubnet }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: nodePaths(l.dir).cniDataDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfiguration(l: RealNodeLayout): string {
  const p = nodePaths(l.dir);
  return `${JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // Hybrid cgroups v1 here; the kubelet refuses v1 unless told (it is in maintenance upstream).
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: l.cgroupRoot,
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
      address: l.nodeIp,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: false },
        x509: { clientCAFile: p.caCert },
      },
      authorization: { mode: 'AlwaysAllow' },
      clusterDomain: 'cluster.local',
      resolvConf: '/etc/resolv.conf',
      rotateCertificates: false,
      serverTLSBootstrap: false,
      evictionHard: { 'memory.available': '0%', 'nodefs.available': '0%', 'imagefs.available': '0%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // Imported images only: nothing here can be pulled.
      serializeImagePulls: false,
      nodeStatusUpdateFrequency: '10s',
      syncFrequency: '10s',
      shutdownGracePeriod: '0s',
      registerNode: true,
      localStorageCapacityIsolation: true,
    },
    null,
    2,
  )}\n`;
}

export function kubeletArgs(l: RealNodeLayout): string[] {
  const p = nodePaths(l.dir);
  return [
    `--config=${p.kubeletConfig}`,
    `--kubeconfig=${p.kubeconfig}`,
    `--root-dir=${p.kubeletRoot}`,
    `--cert-dir=${p.kubeletCertDir}`,
    `--hostname-override=${l.nodeName}`,
    `--node-ip=${l.nodeIp}`,
    `--node-labels=${NODEPOOL_LABEL}=${l.pool}`,
    '--v=1',
  ];
}

/** The node's index (0-249) from its name: each node's addresses differ, though no two namespaces ever meet. */
export function nodeIndex(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h % 250;
}

export function nodeAddresses(name: string): { nodeIp: string; podSubnet: string } {
  const i = nodeIndex(name);
  return { nodeIp: `10.87.${i}.1`, podSubnet: `10.88.${i}.0/24` };
}
