/**
 * The flags each component of a local real control plane runs with. Pure: paths and ports in, args out,
 * so a test can read what runs without starting it.
 *
 * The choices, and why:
 *  - kube-apiserver authorizes with Node,RBAC and admits with NodeRestriction, as a production control
 *    plane does: the product's identities and YurtHub's node identities are judged by the real checks.
 *  - It serves on loopback only; the `kubernetes` Service still needs an advertise address, and a loopback
 *    one is refused by Endpoints validation, so the endpoint reconciler is off (nothing here dials it).
 *  - kube-controller-manager runs every default controller with per-controller service account credentials
 *    (as kubeadm does), so garbage collection, Deployments → ReplicaSets → Pods, the node lifecycle and the
 *    kube-root-ca.crt publisher are the real ones. Leader election is off: there is one of each.
 *  - Neither controller-manager nor scheduler serves HTTPS (--secure-port=0): nothing scrapes them, and
 *    each would need its own serving certificate and delegated authentication.
 */
export interface ControlPlaneLayout {
  dir: string;
  etcdUrl: string;
  apiServerPort: number;
  /** Files written by pki.ts. */
  files: {
    caCert: string;
    apiServerCert: string;
    apiServerKey: string;
    saPublicKey: string;
    saPrivateKey: string;
    controllerManagerKubeconfig: string;
    schedulerKubeconfig: string;
  };
  serviceClusterIpRange: string;
}

export const SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/16';

export function apiServerArgs(l: ControlPlaneLayout): string[] {
  return [
    `--etcd-servers=${l.etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${l.apiServerPort}`,
    `--tls-cert-file=${l.files.apiServerCert}`,
    `--tls-private-key-file=${l.files.apiServerKey}`,
    `--client-ca-file=${l.files.caCert}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    `--service-account-key-file=${l.files.saPublicKey}`,
    `--service-account-signing-key-file=${l.files.saPrivateKey}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-cluster-ip-range=${l.serviceClusterIpRange}`,
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    '--profiling=false',
    `--cert-dir=${l.dir}/apiserver-certs`,
  ];
}

export function controllerManagerArgs(l: ControlPlaneLayout): string[] {
  return [
    ...clientOfTheApiserver(l.files.controllerManagerKubeconfig),
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${l.files.saPrivateKey}`,
    `--root-ca-file=${l.files.caCert}`,
    `--service-cluster-ip-range=${l.serviceClusterIpRange}`,
    '--controllers=*',
    '--profiling=false',
  ];
}

export function schedulerArgs(l: ControlPlaneLayout): string[] {
  return [...clientOfTheApiserver(l.files.schedulerKubeconfig), '--profiling=false'];
}

/** A controller of this control plane: one identity for everything, no serving port, the only one of its kind. */
function clientOfTheApiserver(kubeconfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--secure-port=0',
    '--leader-elect=false',
  ];
}
