/**
 * The product's pods judged by the real Pod Security admission: a namespace of the built kube-apiserver that
 * enforces `restricted` (as the product namespace does, infra/cluster) is sent each pod as a dry-run create.
 * A rendered pool-spirit (plain and yurt-coordinator compat) and the forwarder must be admitted with no
 * exception; a hostNetwork pool must be refused for exactly the documented exception; and a pod broken one
 * field at a time must be refused, naming that check, so the judge is shown to judge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPoolSpirit } from '../../../core/index.ts';
import type { KubeObject } from '../../../core/kube.ts';
import { DEFAULT_PKI_POLICY } from '../../../core/render/pki-spec.ts';
import { COMPAT_LABEL, COORDINATOR_PKI_FILES, ensureCoordinatorPki } from '../../../core/yurt-coordinator/index.ts';
import { keys, NOW, nodePool, renderInput } from '../../core/fixtures.ts';
import { find, kustomize, renderPool } from '../../infra/manifests.ts';
import { type KubeHarness, startRealHostApiserver } from '../../support/real-apiserver.ts';

const NAMESPACE = 'ps-restricted';

type PodTemplate = {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Pod['spec'];
};
interface Pod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: {
    serviceAccountName?: string;
    securityContext?: Record<string, unknown>;
    containers: Array<Record<string, unknown> & { securityContext?: Record<string, unknown> }>;
    initContainers?: Array<Record<string, unknown>>;
    volumes?: Array<Record<string, unknown>>;
    [field: string]: unknown;
  };
}

/** A pod that meets restricted, written out in full, to break one field at a time. */
function compliantPod(): Pod {
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
      ],
    },
  };
}

/** The checks a refusal names, in its order: `name (detail), name (detail)`. */
const checksOf = (violations: string): string[] => violations.split(/\), /).map((v) => v.replace(/ \(.*$/s, ''));

const templateOf = (workload: KubeObject): PodTemplate =>
  (workload as KubeObject & { spec: { template: PodTemplate } }).spec.template;

const podOf = (template: PodTemplate, name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: template.metadata?.labels, annotations: template.metadata?.annotations },
  spec: template.spec,
});

describe('the real Pod Security admission (restricted) on the built kube-apiserver', () => {
  let api: KubeHarness;
  const serviceAccounts = new Set<string>();

  /** The apiserver's answer to a dry-run create of `pod`: admitted, or the violations it names. */
  async function admit(pod: Pod): Promise<{ admitted: boolean; violations: string }> {
    // The ServiceAccount admission refuses a pod whose account does not exist, before Pod Security judges.
    // A new namespace's `default` account is made by the controller-manager, a moment after the namespace.
    const account = pod.spec.serviceAccountName ?? 'default';
    if (!serviceAccounts.has(account)) {
      const made = await api.raw('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account } }),
      });
      expect([201, 409], made.body).toContain(made.status);
      serviceAccounts.add(account);
    }
    const res = await api.raw('POST', `/api/v1/namespaces/${NAMESPACE}/pods?dryRun=All`, { body: JSON.stringify(pod) });
    if (res.status === 201) return { admitted: true, violations: '' };
    const message = (JSON.parse(res.body) as { message?: string }).message ?? res.body;
    // Anything but Pod Security's own refusal (an invalid pod, a missing account) fails the test here.
    expect(message, message).toMatch(/violates PodSecurity "restricted:latest": /);
    return { admitted: false, violations: message.replace(/^.*violates PodSecurity "restricted:latest": /, '') };
  }

  beforeAll(async () => {
    api = await startRealHostApiserver();
    const ns = await api.raw('POST', '/api/v1/namespaces', {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NAMESPACE, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      }),
    });
    expect(ns.status, ns.body).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await api?.stop();
  });

  it('admits a pod that meets restricted (the negative controls below break it one field at a time)', async () => {
    expect(await admit(compliantPod())).toEqual({ admitted: true, violations: '' });
  });

  it.each<[string, (p: Pod) => void, string[]]>([
    [
      // A privileged container may not also refuse privilege escalation (pod validation): two checks.
      'privileged',
      (p) => {
        const context = p.spec.containers[0]!.securityContext!;
        context.privileged = true;
        delete context.allowPrivilegeEscalation;
      },
      ['privileged', 'allowPrivilegeEscalation != false'],
    ],
    // Host networking makes every container port a host port: two checks, as the admission has them.
    ['hostNetwork', (p) => (p.spec.hostNetwork = true), ['host namespaces', 'hostPort']],
    ['hostPID', (p) => (p.spec.hostPID = true), ['host namespaces']],
    [
      'hostPath',
      (p) => p.spec.volumes!.push({ name: 'h', hostPath: { path: '/' } }),
      // Restricted names the volume type only (its baseline check is subsumed).
      ['restricted volume types'],
    ],
    [
      'no drop ALL',
      (p) => (p.spec.containers[0]!.securityContext!.capabilities = { drop: ['NET_RAW'] }),
      ['unrestricted capabilities'],
    ],
    [
      'privilege escalation',
      (p) => delete p.spec.containers[0]!.securityContext!.allowPrivilegeEscalation,
      ['allowPrivilegeEscalation != false'],
    ],
    ['runAsNonRoot', (p) => delete p.spec.securityContext!.runAsNonRoot, ['runAsNonRoot != true']],
    ['runAsUser 0', (p) => (p.spec.containers[0]!.securityContext!.runAsUser = 0), ['runAsUser=0']],
    ['seccomp unset', (p) => delete p.spec.securityContext!.seccompProfile, ['seccompProfile']],
    [
      'an nfs volume',
      (p) => p.spec.volumes!.push({ name: 'n', nfs: { server: 'x', path: '/' } }),
      ['restricted volume types'],
    ],
  ])('refuses a pod with %s, naming exactly its checks', async (_name, breakIt, expected) => {
    const pod = compliantPod();
    breakIt(pod);
    const { admitted, violations } = await admit(pod);
    expect(admitted).toBe(false);
    expect(checksOf(violations), violations).toEqual(expected);
  });

  it('admits a pool-spirit (kube-apiserver, etcd, agent) with no exception', async () => {
    const { objects } = await renderPool();
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment).toBeDefined();
    expect(await admit(podOf(templateOf(deployment!), 'pool-spirit'))).toEqual({ admitted: true, violations: '' });
  });

  it('admits a yurt-coordinator compat pool-spirit (its etcd proxy too) with no exception', async () => {
    const pki = await ensureCoordinatorPki({}, NOW, keys, DEFAULT_PKI_POLICY);
    const name = 'hangzhou';
    const rendered = await renderPoolSpirit(
      await renderInput({
        nodePool: nodePool(name, { metadata: { name, uid: `uid-np-${name}`, labels: { [COMPAT_LABEL]: 'compat' } } }),
        yurtCoordinator: {
          clientCaPem: pki.files[COORDINATOR_PKI_FILES.caCert],
          apiServerServiceIP: '10.96.0.40',
          etcdServiceIP: '10.96.0.41',
        },
      }),
    );
    const deployment = rendered.objects.find((o) => o.kind === 'Deployment');
    expect(deployment).toBeDefined();
    const template = templateOf(deployment!);
    expect(template.spec.containers.map((c) => c.name)).toContain('etcd-proxy');
    expect(await admit(podOf(template, 'compat-pool-spirit'))).toEqual({ admitted: true, violations: '' });
  });

  it('refuses a hostNetwork pool for exactly the documented exception: host networking, its ports, its loopback probes', async () => {
    const { objects } = await renderPool('edge-host', { hostNetwork: true });
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment).toBeDefined();
    const { admitted, violations } = await admit(podOf(templateOf(deployment!), 'host-network-pool-spirit'));
    expect(admitted).toBe(false);
    // A container port is a host port on the host's network: that check comes with host networking.
    expect(checksOf(violations), violations).toEqual(['host namespaces', 'hostPort', 'probe or lifecycle host']);
  });

  it('admits the forwarder, whose containers also run with a read-only root filesystem', async () => {
    const { objects } = await kustomize('infra/cluster');
    const template = templateOf(find(objects, 'Deployment', 'pool-spirit-forwarder', 'pool-spirit-system'));
    expect(await admit(podOf(template, 'forwarder'))).toEqual({ admitted: true, violations: '' });
    for (const c of template.spec.containers)
      expect(c.securityContext?.readOnlyRootFilesystem, String(c.name)).toBe(true);
  });
});
