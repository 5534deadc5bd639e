import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import {
  type KubeObject,
  objectKey,
  renderPoolSpirit,
  renderPoolSpiritObjects,
  SpecRenderError,
  stableHash,
} from '../../../core/index.ts';
import { DAY, nodePool, renderInput } from '../fixtures.ts';
import { type Any, container, find, flags, pkiOf, podSpec } from '../helpers.ts';

describe('renderPoolSpirit: objects', () => {
  it('renders every object labelled and owned by the PoolSpirit, the CA Secret by the NodePool', async () => {
    const r = await renderPoolSpirit(await renderInput());
    expect(r.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Secret/ps-hangzhou-ca',
      'Secret/ps-hangzhou-pki',
      'Secret/ps-hangzhou-agent',
      'ConfigMap/ps-hangzhou-bootstrap',
      'ServiceAccount/ps-hangzhou',
      'Service/ps-hangzhou',
      'Deployment/ps-hangzhou',
    ]);
    for (const o of r.objects) {
      expect(o.metadata.labels).toMatchObject({
        'app.kubernetes.io/managed-by': 'pool-spirit',
        'poolspirit.io/pool': 'hangzhou',
      });
      // The pool CA must survive a deleted PoolSpirit (a new one would otherwise get a new CA).
      const owner =
        o.metadata.name === 'ps-hangzhou-ca'
          ? { apiVersion: 'apps.openyurt.io/v1beta2', kind: 'NodePool', name: 'hangzhou', uid: 'uid-np-hangzhou' }
          : { apiVersion: 'poolspirit.io/v1alpha1', kind: 'PoolSpirit', name: 'hangzhou', uid: 'uid-ps-hangzhou' };
      expect(o.metadata.ownerReferences).toEqual([{ ...owner, controller: true, blockOwnerDeletion: true }]);
      // Nothing cluster-scoped and no RBAC object: the agents' rights are static (infra/cluster/agent).
      expect(o.metadata.namespace).toBe('pool-spirit-system');
    }
    expect(r.endpoint).toBe('https://ps-hangzhou.pool-spirit-system.svc.cluster.local:443');
  });

  it('keeps private keys in Secret data only', async () => {
    const r = await renderPoolSpirit(await renderInput());
    for (const o of r.objects.filter((x) => x.kind !== 'Secret')) {
      expect(JSON.stringify(o)).not.toMatch(/PRIVATE KEY|LS0tLS1CRUdJTiBQUklWQVRF/);
    }
    expect(pkiOf(r)['ca.key']).toMatch(/BEGIN PRIVATE KEY/);
    // The CA keys are in their own Secret, which no volume mounts.
    const mounted = podSpec(r)
      .volumes.filter((v: Any) => v.secret)
      .map((v: Any) => v.secret.secretName);
    expect(mounted).not.toContain('ps-hangzhou-ca');
    expect(Object.keys(find(r, 'Secret', 'ps-hangzhou-pki').data as object)).not.toContain('ca.key');
  });
});

describe('renderPoolSpirit: workload', () => {
  it('puts etcd data on an in-memory emptyDir with a size limit', async () => {
    const r = await renderPoolSpirit(
      await renderInput({ raw: { etcd: { storage: { sizeLimit: '768Mi', quotaBackendBytes: '256Mi' } } } }),
    );
    const volume = podSpec(r).volumes.find((v: Any) => v.name === 'etcd-data');
    expect(volume).toEqual({ name: 'etcd-data', emptyDir: { medium: 'Memory', sizeLimit: '768Mi' } });
    expect(container(r, 'etcd').volumeMounts).toContainEqual({ name: 'etcd-data', mountPath: '/var/lib/etcd' });
  });

  it('runs etcd with quota, compaction and bounded raft log, TLS and client-cert auth on loopback', async () => {
    const r = await renderPoolSpirit(await renderInput({ raw: { etcd: { extraArgs: { 'log-level': 'warn' } } } }));
    const f = flags(r, 'etcd');
    expect(f).toMatchObject({
      'data-dir': '/var/lib/etcd/data',
      'quota-backend-bytes': String(512 * 2 ** 20),
      'auto-compaction-mode': 'periodic',
      'auto-compaction-retention': '10s',
      'snapshot-count': '5000',
      'max-wals': '1',
      'max-snapshots': '1',
      'listen-client-urls': 'https://127.0.0.1:12379',
      'client-cert-auth': 'true',
      'trusted-ca-file': '/etc/kubernetes/pki/etcd-ca.crt',
      'log-level': 'warn',
    });
    expect(container(r, 'etcd').livenessProbe.httpGet).toMatchObject({
      path: '/health?exclude=NOSPACE&serializable=true',
      port: 12381,
    });
  });

  it('runs the apiserver against its etcd over TLS, trusting the cluster CA and the pool CA for clients', async () => {
    const r = await renderPoolSpirit(
      await renderInput({ raw: { apiServer: { extraArgs: { 'service-cluster-ip-range': '10.0.0.0/16', v: '2' } } } }),
    );
    const f = flags(r, 'kube-apiserver');
    expect(f).toMatchObject({
      'etcd-servers': 'https://127.0.0.1:12379',
      'etcd-certfile': '/etc/kubernetes/pki/apiserver-etcd-client.crt',
      'client-ca-file': '/etc/kubernetes/pki/client-ca.crt',
      'authorization-mode': 'RBAC',
      'secure-port': '10270',
      'service-cluster-ip-range': '10.0.0.0/16',
      v: '2',
    });
    // a defaulted flag overridden in place, not duplicated
    expect(
      (container(r, 'kube-apiserver').args as string[]).filter((a) => a.startsWith('--service-cluster-ip-range')),
    ).toHaveLength(1);
    const clientCa = pkiOf(r)['client-ca.crt'];
    expect(clientCa.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(clientCa).toContain(pkiOf(r)['ca.crt'].trim());
    expect(container(r, 'kube-apiserver').readinessProbe.httpGet).toEqual({
      path: '/readyz',
      port: 10270,
      scheme: 'HTTPS',
    });
  });

  it('is one Recreate replica pinned to the pool, with scoped tolerations only', async () => {
    const np = nodePool('hangzhou', {
      spec: { type: 'Edge', taints: [{ key: 'edge', value: 'true', effect: 'NoSchedule' }] },
    });
    const r = await renderPoolSpirit(await renderInput({ nodePool: np }));
    const d = find(r, 'Deployment').spec as Any;
    expect(d.replicas).toBe(1);
    expect(d.strategy).toEqual({ type: 'Recreate' });
    expect(
      d.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: 'apps.openyurt.io/nodepool', operator: 'In', values: ['hangzhou'] }] }]);
    const tolerations = d.template.spec.tolerations as Any[];
    expect(tolerations.every((t) => t.key)).toBe(true); // never an empty key (that tolerates everything)
    for (const t of tolerations.filter((x) => x.effect === 'NoExecute')) {
      expect(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']).toContain(t.key);
      expect(t.tolerationSeconds).toBeGreaterThan(0);
      expect(t.tolerationSeconds).toBeLessThanOrEqual(300);
    }
    expect(tolerations).toContainEqual({ key: 'edge', operator: 'Equal', value: 'true', effect: 'NoSchedule' });
  });

  it('follows the pool on hostNetwork and keeps etcd metrics on loopback then', async () => {
    const off = await renderPoolSpirit(await renderInput());
    expect(podSpec(off).hostNetwork).toBe(false);
    const on = await renderPoolSpirit(
      await renderInput({ nodePool: nodePool('hangzhou', { spec: { type: 'Edge', hostNetwork: true } }) }),
    );
    expect(podSpec(on).hostNetwork).toBe(true);
    expect(podSpec(on).dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(flags(on, 'etcd')['listen-metrics-urls']).toBe('http://127.0.0.1:12381');
    expect(container(on, 'etcd').livenessProbe.httpGet.host).toBe('127.0.0.1');
  });

  it('restricts every container and gives the ServiceAccount token to the agent only', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const pod = podSpec(r);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const c of pod.containers) {
      expect(c.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.resources.requests).toBeDefined();
      const tokenMounted = (c.volumeMounts as Any[]).some((m) => m.name === 'agent-token');
      expect(tokenMounted).toBe(c.name === 'agent');
    }
    expect(container(r, 'agent').env).toEqual(
      expect.arrayContaining([
        { name: 'POOL_NAME', value: 'hangzhou' },
        { name: 'POOLSPIRIT_NAME', value: 'hangzhou' },
        { name: 'BOOTSTRAP_CONFIGMAP', value: 'ps-hangzhou-bootstrap' },
      ]),
    );
  });

  it('applies overrides last, selecting containers by name', async () => {
    const r = await renderPoolSpirit(
      await renderInput({
        raw: {
          overrides: [
            { op: 'replace', path: '/spec/template/spec/containers/name=etcd/image', value: 'example.com/my-etcd:1' },
            { op: 'add', path: '/spec/template/spec/nodeSelector', value: { disk: 'ssd' } },
          ],
        },
      }),
    );
    expect(container(r, 'etcd').image).toBe('example.com/my-etcd:1');
    expect(podSpec(r).nodeSelector).toEqual({ disk: 'ssd' });
  });

  it('reports an override that does not apply as a field error', async () => {
    const input = await renderInput({
      raw: { overrides: [{ op: 'replace', path: '/spec/template/spec/containers/name=scheduler/image', value: 'x' }] },
    });
    const err = await renderPoolSpirit(input).catch((e) => e);
    expect(err).toBeInstanceOf(SpecRenderError);
    expect(err.issues[0].field).toBe('spec.overrides[0].path');
    const labels = await renderInput({
      raw: { overrides: [{ op: 'remove', path: '/spec/template/metadata/labels/app.kubernetes.io~1instance' }] },
    });
    expect((await renderPoolSpirit(labels).catch((e) => e)).issues[0]).toMatchObject({
      field: 'spec.overrides[0]',
      message: expect.stringMatching(/selects its pods/),
    });
  });
});

describe('renderPoolSpirit: Service and ServiceAccount', () => {
  it('exposes only the apiserver, on 443', async () => {
    const r = await renderPoolSpirit(await renderInput());
    expect((find(r, 'Service').spec as Any).ports).toEqual([
      { name: 'https', port: 443, targetPort: 10270, protocol: 'TCP' },
    ]);
    expect((find(r, 'Service').spec as Any).type).toBe('ClusterIP');
  });

  it('gives the agent its own ServiceAccount and renders no RBAC object (its rights are static)', async () => {
    const r = await renderPoolSpirit(await renderInput());
    expect(find(r, 'ServiceAccount')).toMatchObject({
      metadata: { name: 'ps-hangzhou', namespace: 'pool-spirit-system' },
      automountServiceAccountToken: false,
    });
    expect(r.objects.filter((o) => o.apiVersion.startsWith('rbac.authorization.k8s.io/')).map((o) => o.kind)).toEqual(
      [],
    );
    expect(podSpec(r).serviceAccountName).toBe('ps-hangzhou');
  });
});

describe('renderPoolSpirit: bootstrap', () => {
  it('holds kube-system, the NodePool CRD and system:nodes → poolspirit:yurthub (no aggregated admin), with a stable content hash', async () => {
    const r = await renderPoolSpirit(await renderInput());
    const cm = find(r, 'ConfigMap') as KubeObject & { data: Record<string, string> };
    const docs = parseAllDocuments(cm.data['manifests.yaml']).map((d) => d.toJSON());
    expect(docs.find((d) => d.kind === 'Namespace')?.metadata.name).toBe('kube-system');
    const crd = docs.find((d) => d.kind === 'CustomResourceDefinition');
    expect(crd.metadata.name).toBe('nodepools.apps.openyurt.io');
    expect(docs.filter((d) => d.kind === 'ClusterRoleBinding').map((d) => d.roleRef.name)).toEqual([
      'poolspirit:yurthub',
    ]);
    const binding = docs.find((d) => d.kind === 'ClusterRoleBinding');
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }]);
    expect(JSON.stringify(docs)).not.toContain('system:masters');
    expect(cm.data.hash).toBe(r.bootstrapHash);
    expect(cm.metadata.annotations?.['poolspirit.io/bootstrap-hash']).toBe(r.bootstrapHash);
    expect(r.bootstrapHash).toBe(stableHash(docs));
    const again = await renderPoolSpirit(await renderInput({ existingPki: pkiOf(r) }));
    expect(again.bootstrapHash).toBe(r.bootstrapHash);
  });
});

describe('renderPoolSpirit: stability', () => {
  it('a second render from the first one’s PKI is identical, byte for byte', async () => {
    const first = await renderPoolSpirit(await renderInput({ existingPki: undefined }));
    expect(first.pki.reused).toBe(false);
    const second = await renderPoolSpirit(
      await renderInput({ existingPki: pkiOf(first), now: new Date(Date.parse('2026-03-01T00:00:00Z')) }),
    );
    expect(second.pki).toMatchObject({ reused: true, reasons: [] });
    expect(JSON.stringify(second.objects)).toBe(JSON.stringify(first.objects));
    expect(second.desiredHash).toBe(first.desiredHash);
  });

  it('renders the same objects without their hash for a caller that only compares them (the audit)', async () => {
    const first = await renderPoolSpirit(await renderInput({ existingPki: undefined }));
    const input = await renderInput({ existingPki: pkiOf(first) });
    const full = await renderPoolSpirit(input);
    const objectsOnly = await renderPoolSpiritObjects(input);
    expect(JSON.stringify(objectsOnly.objects)).toBe(JSON.stringify(full.objects));
    expect(full.desiredHash).toBe(stableHash(full.objects));
    expect(objectsOnly).not.toHaveProperty('desiredHash');
  });

  it('one spec field change changes only the objects it affects', async () => {
    const first = await renderPoolSpirit(await renderInput());
    const existingPki = pkiOf(first);
    const changed = await renderPoolSpirit(
      await renderInput({ existingPki, raw: { apiServer: { extraArgs: { v: '4' } } } }),
    );
    const differing = (a: KubeObject[], b: KubeObject[]) => {
      const before = new Map(a.map((o) => [objectKey(o), JSON.stringify(o)]));
      return b.filter((o) => before.get(objectKey(o)) !== JSON.stringify(o)).map((o) => `${o.kind}/${o.metadata.name}`);
    };
    expect(differing(first.objects, changed.objects)).toEqual(['Deployment/ps-hangzhou']);
    const quota = await renderPoolSpirit(
      await renderInput({ existingPki, raw: { etcd: { storage: { quotaBackendBytes: '256Mi' } } } }),
    );
    expect(differing(first.objects, quota.objects)).toEqual(['Deployment/ps-hangzhou']);
    expect(changed.desiredHash).not.toBe(first.desiredHash);
    // and the changed flag rolls the pod through the config-hash annotation
    const hash = (r: typeof first) =>
      ((find(r, 'Deployment').spec as Any).template.metadata.annotations as Record<string, string>)[
        'poolspirit.io/config-hash'
      ];
    expect(hash(changed)).not.toBe(hash(first));
  });

  it('flags an etcd version change as a planned re-seed and an apiserver change as a roll', async () => {
    const first = await renderPoolSpirit(await renderInput());
    const live = find(first, 'Deployment');
    const next = await renderPoolSpirit(
      await renderInput({
        existingPki: pkiOf(first),
        liveWorkload: live,
        raw: { etcd: { version: '3.6.17-0' }, apiServer: { version: 'v1.36.4' } },
      }),
    );
    expect(next.changes).toEqual([
      { component: 'apiServer', from: 'v1.36.3', to: 'v1.36.4', kind: 'roll' },
      { component: 'etcd', from: '3.6.16-0', to: '3.6.17-0', kind: 'reseed' },
    ]);
    expect(first.changes).toEqual([]);
  });

  it('remembers a render that issued nothing: a repeat gets the same frozen objects', async () => {
    const input = await renderInput({ raw: { apiServer: { extraArgs: { v: '3' } } } });
    const first = await renderPoolSpirit(input);
    const again = await renderPoolSpirit({ ...input, poolSpirit: structuredClone(input.poolSpirit) });
    expect(first.pki.reused).toBe(true);
    expect(again.objects).toBe(first.objects);
    expect(again.desiredHash).toBe(first.desiredHash);
    for (const o of again.objects) expect(Object.isFrozen(o) && Object.isFrozen(o.metadata)).toBe(true);
  });

  it('reads the NodePool’s identity, labels and spec, not its status', async () => {
    const input = await renderInput({ raw: { apiServer: { extraArgs: { v: '5' } } } });
    const first = await renderPoolSpirit(input);
    const withStatus = await renderPoolSpirit({
      ...input,
      nodePool: { ...input.nodePool, status: { readyNodeNum: 3, nodes: ['a', 'b', 'c'] } },
    });
    expect(withStatus.objects).toBe(first.objects);
    const tainted = await renderPoolSpirit({
      ...input,
      nodePool: nodePool('hangzhou', { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] } }),
    });
    expect(tainted.objects).not.toBe(first.objects);
    expect(JSON.stringify(find(tainted, 'Deployment'))).toContain('"key":"k"');
  });

  it('checks the PKI again once its renewal point is reached, remembered or not', async () => {
    const input = await renderInput({ raw: { apiServer: { extraArgs: { v: '6' } } } });
    const now = await renderPoolSpirit(input);
    expect(now.pki.reused).toBe(true);
    const expiring = new Date(Date.parse(now.pki.notAfter) - 10 * DAY);
    const later = await renderPoolSpirit({ ...input, now: expiring });
    expect(later.pki.reused).toBe(false);
    expect(later.pki.reasons.some((r) => r.includes('within 30 days'))).toBe(true);
  });

  it('names long or dotted pools within Kubernetes limits', async () => {
    const long = `edge.${'a'.repeat(80)}`;
    const input = await renderInput({ nodePool: nodePool(long), raw: { nodePool: long } });
    input.poolSpirit.metadata.name = long;
    const r = await renderPoolSpirit(input);
    const service = find(r, 'Service').metadata.name;
    expect(service).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    expect(service.length).toBeLessThanOrEqual(63);
    for (const o of r.objects) {
      expect(o.metadata.name.length).toBeLessThanOrEqual(253);
      expect(o.metadata.labels?.['poolspirit.io/pool']?.length).toBeLessThanOrEqual(63);
    }
    expect(parseYaml(JSON.stringify(find(r, 'Deployment')))).toBeTruthy();
  });
});

describe('existingPkiFromSecrets', () => {
  it('turns live Secrets back into the existingPki input, the CA Secret winning', async () => {
    const { existingPkiFromSecrets, objectNames } = await import('../../../core/index.ts');
    const r = await renderPoolSpirit(await renderInput());
    const secrets = r.objects.filter((o) => o.kind === 'Secret');
    const existing = existingPkiFromSecrets([...secrets].reverse(), objectNames('hangzhou'));
    expect(existing).toEqual(pkiOf(r));
    const stale = structuredClone(secrets[1]) as KubeObject & { data: Record<string, string> };
    stale.data['ca.crt'] = Buffer.from('stale').toString('base64');
    expect(existingPkiFromSecrets([secrets[0], stale, undefined], objectNames('hangzhou'))['ca.crt']).toBe(
      pkiOf(r)['ca.crt'],
    );
    expect(existingPkiFromSecrets([stale, secrets[0]], objectNames('hangzhou'))['ca.crt']).toBe(pkiOf(r)['ca.crt']);
  });
});
