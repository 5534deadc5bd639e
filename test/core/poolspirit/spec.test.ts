import { describe, expect, it } from 'vitest';
import { DEFAULT_ETCD_STORAGE, type FieldIssue, parsePoolSpiritSpec } from '../../../core/index.ts';
import { DEFAULT_RESOURCES } from '../../../core/poolspirit/defaults.ts';

function issues(raw: unknown): FieldIssue[] {
  const r = parsePoolSpiritSpec(raw);
  if (r.ok) throw new Error('expected the spec to be rejected');
  return r.issues;
}

function issueFor(raw: unknown, field: string): FieldIssue {
  const all = issues(raw);
  const hit = all.find((i) => i.field === field);
  if (!hit) throw new Error(`no issue for ${field}; got ${JSON.stringify(all)}`);
  return hit;
}

describe('parsePoolSpiritSpec', () => {
  it('fills every default from the bundle and the storage defaults', () => {
    const r = parsePoolSpiritSpec({ nodePool: 'hangzhou' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.spec.version).toBe('0.1.0');
    expect(r.spec.apiServer.image).toBe('registry.k8s.io/kube-apiserver:v1.36.3');
    expect(r.spec.etcd.image).toBe('registry.k8s.io/etcd:3.6.16-0');
    expect(r.spec.etcd.storage).toEqual({
      medium: 'Memory',
      sizeLimit: '1Gi',
      quotaBackendBytes: 512 * 2 ** 20,
      autoCompaction: { mode: 'periodic', retention: '10s' },
      snapshotCount: 5000,
      maxWals: 1,
      maxSnapshots: 1,
    });
    expect(r.spec.etcd.resources.limits.memory).toBe('2Gi');
    expect(r.spec.paused).toBe(false);
    expect(r.spec.overrides).toEqual([]);
  });

  it('merges resources per key over the defaults and keeps component versions apart from the bundle', () => {
    const r = parsePoolSpiritSpec({
      nodePool: 'p',
      apiServer: { version: 'v1.31.2', resources: { limits: { memory: '2Gi' } } },
    });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.spec.apiServer.image).toBe('registry.k8s.io/kube-apiserver:v1.31.2');
    expect(r.spec.apiServer.resources).toEqual({
      requests: DEFAULT_RESOURCES.apiServer.requests,
      limits: { memory: '2Gi' },
    });
    expect(r.spec.etcd.version).toBe('3.6.16-0');
  });

  it('rejects an extraArgs flag the product owns, naming the flag and why', () => {
    const issue = issueFor(
      { nodePool: 'p', etcd: { extraArgs: { 'data-dir': '/tmp/x' } } },
      'spec.etcd.extraArgs.data-dir',
    );
    expect(issue.message).toMatch(/--data-dir is owned by pool-spirit/);
    expect(issue.message).toMatch(/in-memory volume/);
    const etcdServers = issueFor(
      { nodePool: 'p', apiServer: { extraArgs: { 'etcd-servers': 'https://x:2379' } } },
      'spec.apiServer.extraArgs.etcd-servers',
    );
    expect(etcdServers.message).toMatch(/127\.0\.0\.1/);
    issueFor(
      { nodePool: 'p', apiServer: { extraArgs: { 'client-ca-file': '/x' } } },
      'spec.apiServer.extraArgs.client-ca-file',
    );
    issueFor(
      { nodePool: 'p', apiServer: { extraArgs: { 'secure-port': '6443' } } },
      'spec.apiServer.extraArgs.secure-port',
    );
    issueFor({ nodePool: 'p', agent: { extraArgs: { kubeconfig: '/x' } } }, 'spec.agent.extraArgs.kubeconfig');
  });

  it('points storage flags to their spec field', () => {
    const issue = issueFor(
      { nodePool: 'p', etcd: { extraArgs: { 'quota-backend-bytes': '1' } } },
      'spec.etcd.extraArgs.quota-backend-bytes',
    );
    expect(issue.message).toContain('spec.etcd.storage.quotaBackendBytes');
  });

  it('accepts flags the product does not own, and rejects dashed flag names', () => {
    expect(
      parsePoolSpiritSpec({
        nodePool: 'p',
        apiServer: { extraArgs: { v: '4', 'service-cluster-ip-range': '10.0.0.0/16' } },
      }).ok,
    ).toBe(true);
    expect(
      issueFor({ nodePool: 'p', etcd: { extraArgs: { '--log-level': 'debug' } } }, 'spec.etcd.extraArgs.--log-level')
        .message,
    ).toMatch(/without leading dashes/);
  });

  it('rejects a bad quantity with the quantity grammar in the message', () => {
    const issue = issueFor({ nodePool: 'p', etcd: { storage: { sizeLimit: '1 GB' } } }, 'spec.etcd.storage.sizeLimit');
    expect(issue.message).toMatch(/Kubernetes quantity/);
    issueFor(
      { nodePool: 'p', agent: { resources: { limits: { memory: 'lots' } } } },
      'spec.agent.resources.limits.memory',
    );
    issueFor(
      { nodePool: 'p', agent: { resources: { limits: { memory: '-1Gi' } } } },
      'spec.agent.resources.limits.memory',
    );
    expect(
      parsePoolSpiritSpec({ nodePool: 'p', agent: { resources: { limits: { memory: 268435456, cpu: '1.5' } } } }).ok,
    ).toBe(true);
  });

  it('rejects unknown fields at any depth, one issue per field', () => {
    const all = issues({ nodePool: 'p', colour: 'blue', etcd: { storage: { medium: 'Memory', disk: true } } });
    expect(all).toContainEqual({ field: 'spec.colour', message: 'unknown field "colour"' });
    expect(all).toContainEqual({ field: 'spec.etcd.storage.disk', message: 'unknown field "disk"' });
  });

  it('explains why apiServer replicas are not a field', () => {
    expect(issueFor({ nodePool: 'p', apiServer: { replicas: 2 } }, 'spec.apiServer.replicas').message).toMatch(
      /single-member in-memory etcd/,
    );
  });

  it('rejects a disk medium, a missing nodePool and an unknown bundle', () => {
    issueFor({ nodePool: 'p', etcd: { storage: { medium: 'Disk' } } }, 'spec.etcd.storage.medium');
    expect(issueFor({}, 'spec.nodePool').message).toBe('required');
    expect(issueFor({ nodePool: 'p', version: '9.9.9' }, 'spec.version').message).toMatch(
      /unknown bundle "9.9.9"; known bundles: 0.1.0/,
    );
    expect(
      parsePoolSpiritSpec(
        { nodePool: 'p', version: '9.9.9' },
        { bundles: { '9.9.9': { apiServer: 'v1', etcd: 'e', agent: 'a' } } },
      ).ok,
    ).toBe(true);
  });

  it('checks storage against the volume and the memory limit', () => {
    expect(
      issueFor(
        { nodePool: 'p', etcd: { storage: { quotaBackendBytes: '1Gi' } } },
        'spec.etcd.storage.quotaBackendBytes',
      ).message,
    ).toMatch(/128Mi of WAL/);
    expect(
      issueFor({ nodePool: 'p', etcd: { storage: { sizeLimit: '4Gi' } } }, 'spec.etcd.resources.limits.memory').message,
    ).toMatch(/counts against/);
    expect(
      issueFor(
        { nodePool: 'p', etcd: { storage: { autoCompaction: { mode: 'periodic', retention: '1000' } } } },
        'spec.etcd.storage.autoCompaction.retention',
      ).message,
    ).toMatch(/duration/);
    const revision = parsePoolSpiritSpec({
      nodePool: 'p',
      etcd: { storage: { autoCompaction: { mode: 'revision' } } },
    });
    expect(revision.ok && revision.spec.etcd.storage.autoCompaction).toEqual({ mode: 'revision', retention: '10000' });
    expect(DEFAULT_ETCD_STORAGE.quotaBackendBytes).toBe('512Mi');
  });

  it('rejects a tag in image and a request above its limit', () => {
    expect(
      issueFor({ nodePool: 'p', etcd: { image: 'quay.io/coreos/etcd:v3.5.0' } }, 'spec.etcd.image').message,
    ).toMatch(/spec.etcd.version/);
    expect(parsePoolSpiritSpec({ nodePool: 'p', etcd: { image: 'localhost:5000/etcd' } }).ok).toBe(true);
    issueFor(
      { nodePool: 'p', agent: { resources: { requests: { memory: '1Gi' } } } },
      'spec.agent.resources.requests.memory',
    );
  });

  it('validates overrides: op requirements and protected paths', () => {
    expect(
      issueFor(
        { nodePool: 'p', overrides: [{ op: 'replace', path: '/spec/replicas', value: 2 }] },
        'spec.overrides[0].path',
      ).message,
    ).toMatch(/one pod/);
    issueFor(
      { nodePool: 'p', overrides: [{ op: 'add', path: '/spec/template/spec/hostPID' }] },
      'spec.overrides[0].value',
    );
    issueFor({ nodePool: 'p', overrides: [{ op: 'add', path: 'spec/template', value: 1 }] }, 'spec.overrides[0].path');
    issueFor({ nodePool: 'p', overrides: [{ op: 'jump', path: '/spec/template' }] }, 'spec.overrides[0].op');
    expect(
      parsePoolSpiritSpec({
        nodePool: 'p',
        overrides: [{ op: 'replace', path: '/spec/template/spec/containers/name=etcd/image', value: 'x' }],
      }).ok,
    ).toBe(true);
  });

  it('reports every issue, not only the first', () => {
    const all = issues({
      nodePool: 'p',
      etcd: { extraArgs: { 'data-dir': 'x', 'cert-file': 'y' } },
      apiServer: { extraArgs: { 'authorization-mode': 'AlwaysAllow' } },
    });
    expect(all.map((i) => i.field).sort()).toEqual([
      'spec.apiServer.extraArgs.authorization-mode',
      'spec.etcd.extraArgs.cert-file',
      'spec.etcd.extraArgs.data-dir',
    ]);
  });
});
