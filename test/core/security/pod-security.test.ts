import { describe, expect, it } from 'vitest';
import { formatViolations, podSecurityViolations, podTemplateOf } from '../../../core/security/pod-security.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { find, kustomize, kustomizeOverlay, renderPool } from '../../infra/manifests.ts';

/** A pod that meets restricted, written out in full, to break one field at a time. */
function compliantPod(): Record<string, any> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'main',
          image: 'x',
          ports: [{ containerPort: 8080 }],
          livenessProbe: { httpGet: { path: '/', port: 8080 } },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
      volumes: [
        { name: 'a', emptyDir: {} },
        { name: 'b', secret: { secretName: 's' } },
        { name: 'c', projected: { sources: [] } },
      ],
    },
  };
}

const checksOf = (obj: unknown, level?: 'baseline' | 'restricted') =>
  podSecurityViolations(obj, level).map((v) => `${v.check} @ ${v.path}`);

describe('Pod Security Standards check', () => {
  it('passes a pod that meets restricted', () => {
    expect(podSecurityViolations(compliantPod())).toEqual([]);
  });

  it.each([
    [
      'privileged',
      (p: any) => (p.spec.containers[0].securityContext.privileged = true),
      'Privileged Containers @ spec.containers[0].securityContext.privileged',
    ],
    ['hostNetwork', (p: any) => (p.spec.hostNetwork = true), 'Host Namespaces @ spec.hostNetwork'],
    ['hostPID', (p: any) => (p.spec.hostPID = true), 'Host Namespaces @ spec.hostPID'],
    ['hostIPC', (p: any) => (p.spec.hostIPC = true), 'Host Namespaces @ spec.hostIPC'],
    [
      'hostPath',
      (p: any) => p.spec.volumes.push({ name: 'h', hostPath: { path: '/' } }),
      'HostPath Volumes @ spec.volumes[3].hostPath',
    ],
    [
      'hostPort',
      (p: any) => (p.spec.containers[0].ports[0].hostPort = 80),
      'Host Ports @ spec.containers[0].ports[0].hostPort',
    ],
    [
      'probe host',
      (p: any) => (p.spec.containers[0].livenessProbe.httpGet.host = '10.0.0.1'),
      'Host Probes / Lifecycle Hooks @ spec.containers[0].livenessProbe.httpGet.host',
    ],
    [
      'hook host',
      (p: any) => (p.spec.containers[0].lifecycle = { preStop: { tcpSocket: { port: 1, host: 'x' } } }),
      'Host Probes / Lifecycle Hooks @ spec.containers[0].lifecycle.preStop.tcpSocket.host',
    ],
    [
      'AppArmor field',
      (p: any) => (p.spec.securityContext.appArmorProfile = { type: 'Unconfined' }),
      'AppArmor @ spec.securityContext.appArmorProfile.type',
    ],
    [
      'AppArmor annotation',
      (p: any) => (p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/main': 'unconfined' }),
      'AppArmor @ metadata.annotations[container.apparmor.security.beta.kubernetes.io/main]',
    ],
    [
      'SELinux type',
      (p: any) => (p.spec.containers[0].securityContext.seLinuxOptions = { type: 'spc_t' }),
      'SELinux @ spec.containers[0].securityContext.seLinuxOptions.type',
    ],
    [
      'SELinux user',
      (p: any) => (p.spec.securityContext.seLinuxOptions = { user: 'root' }),
      'SELinux @ spec.securityContext.seLinuxOptions.user',
    ],
    [
      'procMount',
      (p: any) => (p.spec.containers[0].securityContext.procMount = 'Unmasked'),
      '/proc Mount Type @ spec.containers[0].securityContext.procMount',
    ],
    [
      'sysctl',
      (p: any) => (p.spec.securityContext.sysctls = [{ name: 'kernel.msgmax', value: '1' }]),
      'Sysctls @ spec.securityContext.sysctls[0].name',
    ],
    [
      'volume type',
      (p: any) => p.spec.volumes.push({ name: 'n', nfs: { server: 'x', path: '/' } }),
      'Volume Types @ spec.volumes[3].nfs',
    ],
    [
      'privilege escalation',
      (p: any) => delete p.spec.containers[0].securityContext.allowPrivilegeEscalation,
      'Privilege Escalation @ spec.containers[0].securityContext.allowPrivilegeEscalation',
    ],
    [
      'runAsNonRoot',
      (p: any) => delete p.spec.securityContext.runAsNonRoot,
      'Running as Non-root @ spec.containers[0].securityContext.runAsNonRoot',
    ],
    [
      'runAsUser 0',
      (p: any) => (p.spec.containers[0].securityContext.runAsUser = 0),
      'Running as Non-root user @ spec.containers[0].securityContext.runAsUser',
    ],
    [
      'seccomp unset',
      (p: any) => delete p.spec.securityContext.seccompProfile,
      'Seccomp @ spec.containers[0].securityContext.seccompProfile.type',
    ],
    [
      'seccomp Unconfined',
      (p: any) => (p.spec.containers[0].securityContext.seccompProfile = { type: 'Unconfined' }),
      'Seccomp @ spec.containers[0].securityContext.seccompProfile.type',
    ],
    [
      'drop ALL',
      (p: any) => (p.spec.containers[0].securityContext.capabilities.drop = ['NET_RAW']),
      'Capabilities @ spec.containers[0].securityContext.capabilities.drop',
    ],
    [
      'add SYS_ADMIN',
      (p: any) => (p.spec.containers[0].securityContext.capabilities.add = ['SYS_ADMIN']),
      'Capabilities @ spec.containers[0].securityContext.capabilities.add[0]',
    ],
  ])('reports %s with its field path, once', (_name, breakIt, expected) => {
    const pod = compliantPod();
    breakIt(pod);
    expect(checksOf(pod)).toEqual([expected]);
  });

  it('allows what restricted allows: NET_BIND_SERVICE, Localhost profiles, safe sysctls, container-level non-root', () => {
    const pod = compliantPod();
    const c = pod.spec.containers[0];
    c.securityContext.capabilities.add = ['NET_BIND_SERVICE'];
    c.securityContext.seccompProfile = { type: 'Localhost', localhostProfile: 'p.json' };
    c.securityContext.runAsNonRoot = true;
    delete pod.spec.securityContext.runAsNonRoot;
    pod.spec.securityContext.sysctls = [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }];
    pod.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/main': 'localhost/prof' };
    expect(podSecurityViolations(pod)).toEqual([]);
  });

  it('checks init and ephemeral containers too', () => {
    const pod = compliantPod();
    pod.spec.initContainers = [
      {
        name: 'init',
        image: 'x',
        securityContext: { privileged: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ];
    expect(checksOf(pod)).toEqual(['Privileged Containers @ spec.initContainers[0].securityContext.privileged']);
  });

  it('baseline allows what only restricted forbids', () => {
    const pod = compliantPod();
    delete pod.spec.securityContext;
    pod.spec.containers[0].securityContext = { capabilities: { add: ['CHOWN'] } };
    pod.spec.volumes.push({ name: 'n', nfs: { server: 'x', path: '/' } });
    expect(podSecurityViolations(pod, 'baseline')).toEqual([]);
    expect(checksOf(pod, 'restricted')).toContain(
      'Capabilities @ spec.containers[0].securityContext.capabilities.add[0]',
    );
  });

  it('exempts Windows pods from the Linux-only restricted checks', () => {
    const pod = compliantPod();
    pod.spec.os = { name: 'windows' };
    delete pod.spec.securityContext.seccompProfile;
    pod.spec.containers[0].securityContext = {};
    expect(podSecurityViolations(pod)).toEqual([]);
  });

  it('finds the pod template of every workload kind and names bad input', () => {
    const template = { metadata: { labels: { a: 'b' } }, spec: compliantPod().spec };
    expect(podTemplateOf({ kind: 'Deployment', spec: { template } }).prefix).toBe('spec.template');
    expect(podTemplateOf({ kind: 'CronJob', spec: { jobTemplate: { spec: { template } } } }).prefix).toBe(
      'spec.jobTemplate.spec.template',
    );
    expect(() => podSecurityViolations({ kind: 'Service' })).toThrow(/kind: expected one of .*Deployment/);
    // Names inherited by every object are not kinds: each gets the error naming the field, not a crash.
    for (const kind of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(() => podTemplateOf({ kind }), kind).toThrow(/kind: expected one of .*Deployment/);
    }
    expect(() => podSecurityViolations({ kind: 'Deployment', spec: {} })).toThrow(
      'spec.template: expected the pod template of the Deployment',
    );
    expect(() => podSecurityViolations({ kind: 'Pod', spec: { containers: [] } })).toThrow(
      'spec.containers: expected at least one container',
    );
    expect(() => podSecurityViolations(null)).toThrow(/expected a Kubernetes object/);
  });
});

describe('the product workloads against restricted', () => {
  it('a pool-spirit (kube-apiserver, etcd, agent) passes restricted with no exception', async () => {
    const { objects } = await renderPool();
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    const violations = podSecurityViolations(deployment);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it('a pool with hostNetwork has exactly the documented exception: host networking (and its loopback etcd probes)', async () => {
    const { objects } = await renderPool('edge-host', { hostNetwork: true });
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    expect(checksOf(deployment)).toEqual([
      'Host Namespaces @ spec.template.spec.hostNetwork',
      'Host Probes / Lifecycle Hooks @ spec.template.spec.containers[1].livenessProbe.httpGet.host',
      'Host Probes / Lifecycle Hooks @ spec.template.spec.containers[1].startupProbe.httpGet.host',
    ]);
  });

  it('the forwarder Deployment passes restricted and can run with a read-only root filesystem', async () => {
    const { objects } = await kustomize('infra/cluster');
    const forwarder = find(objects, 'Deployment', 'pool-spirit-forwarder', 'pool-spirit-system');
    const violations = podSecurityViolations(forwarder);
    expect(violations, formatViolations(violations)).toEqual([]);
    const containers = (
      forwarder as KubeObject & { spec: { template: { spec: { containers: Array<Record<string, any>> } } } }
    ).spec.template.spec.containers;
    for (const c of containers) expect(c.securityContext.readOnlyRootFilesystem, c.name).toBe(true);
  });

  it('the namespace enforces restricted; the host-network component relaxes enforcement only', async () => {
    const base = find((await kustomize('infra/cluster')).objects, 'Namespace', 'pool-spirit-system').metadata.labels!;
    expect(base).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
    const overlay = await kustomizeOverlay(['infra/cluster'], ['infra/cluster/components/host-network-pools']);
    const relaxed = find(overlay, 'Namespace', 'pool-spirit-system').metadata.labels!;
    expect(relaxed).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
  });
});
