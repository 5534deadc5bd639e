/** kubectl and @kubernetes/client-node against the TLS API through the kubeconfig writeKubeconfig writes. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL } from '../../../../../dev/local/kube-bins/index.ts';
import { issueClientCertificate } from '../../../../../dev/local/pki.ts';
import { type AuthCluster, clusterRoleBinding, identity, RBAC, startAuthCluster, user } from './harness.ts';

const run = promisify(execFile);

describe('kubectl and client-node with client certificates', () => {
  let c: AuthCluster;
  let dir: string;
  const kubectl = async (kubeconfig: string, ...args: string[]) => {
    try {
      const running = run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
        encoding: 'utf8',
      });
      // kubectl prompts for a username on 401 when it has no credentials: give it no input, never a hang.
      running.child.stdin?.end();
      const { stdout, stderr } = await running;
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    c = await startAuthCluster();
    dir = await mkdtemp(join(tmpdir(), 'kube-auth-'));
    await c.cluster.writeKubeconfig(join(dir, 'admin'), c.pki.admin);
    await c.cluster.writeKubeconfig(join(dir, 'dev'), await identity('dev', ['developers']));
    await c.cluster.writeKubeconfig(join(dir, 'nobody'));
    await c.cluster.writeKubeconfig(
      join(dir, 'stranger'),
      await issueClientCertificate(c.pki.stranger, { user: 'intruder', groups: ['system:masters'] }),
    );
  });
  afterAll(async () => {
    await c?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes the CA and the client credentials, base64-encoded, in a 0600 file', async () => {
    const text = await readFile(join(dir, 'admin'), 'utf8');
    expect((await stat(join(dir, 'admin'))).mode & 0o777).toBe(0o600);
    expect(text).toContain(`server: ${c.cluster.url}`);
    expect(text).toContain(`certificate-authority-data: ${Buffer.from(c.pki.ca.certPem).toString('base64')}`);
    expect(text).toContain(`client-certificate-data: ${Buffer.from(c.pki.admin.certPem).toString('base64')}`);
    expect(text).toContain('client-key-data: ');
    expect(text).not.toContain('insecure-skip-tls-verify');
    expect(text).not.toContain('PRIVATE KEY');
  });

  it('kubectl as admin lists namespaces', async () => {
    const res = await kubectl(join(dir, 'admin'), 'get', 'ns', '-o', 'name');
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')).toContain('namespace/kube-system');
  });

  it('kubectl with a certificate from an untrusted CA is told it must log in', async () => {
    const res = await kubectl(join(dir, 'stranger'), 'get', 'ns');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
  });

  it('kubectl without credentials gets 401 (and, as with kube, asks for a username it cannot read)', async () => {
    const res = await kubectl(join(dir, 'nobody'), 'get', 'ns');
    expect(res.code).not.toBe(0);
    expect(res.stdout + res.stderr).toContain('Please enter Username: error: EOF');
  });

  it('kubectl auth can-i and whoami follow RBAC', async () => {
    const dev = join(dir, 'dev');
    expect(await kubectl(dev, 'auth', 'can-i', 'list', 'pods')).toMatchObject({ code: 1, stdout: 'no\n' });
    const forbidden = await kubectl(dev, 'get', 'pods');
    expect(forbidden.stderr).toContain(
      'Error from server (Forbidden): pods is forbidden: User "dev" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    await c.admin(
      'POST',
      `/apis/${RBAC}/v1/clusterrolebindings`,
      clusterRoleBinding('developers-edit', 'edit', [{ apiGroup: RBAC, kind: 'Group', name: 'developers' }]),
    );
    expect(await kubectl(dev, 'auth', 'can-i', 'list', 'pods')).toMatchObject({ code: 0, stdout: 'yes\n' });
    expect(await kubectl(dev, 'auth', 'can-i', 'create', 'nodes')).toMatchObject({ code: 1, stdout: 'no\n' });
    expect(await kubectl(dev, 'auth', 'can-i', 'get', '/version')).toMatchObject({ code: 0, stdout: 'yes\n' });
    const created = await kubectl(dev, 'create', 'configmap', 'from-dev', '--from-literal=a=b');
    expect(created).toMatchObject({ code: 0, stdout: 'configmap/from-dev created\n' });
    const whoami = await kubectl(dev, 'auth', 'whoami', '-o', 'json');
    expect(JSON.parse(whoami.stdout).status.userInfo).toEqual({
      username: 'dev',
      groups: ['developers', 'system:authenticated'],
    });
  });

  it('kubectl --as impersonates through the admin kubeconfig', async () => {
    const res = await kubectl(
      join(dir, 'admin'),
      '--as',
      'dev',
      '--as-group',
      'developers',
      'auth',
      'whoami',
      '-o',
      'json',
    );
    expect(JSON.parse(res.stdout).status.userInfo).toEqual({
      username: 'dev',
      groups: ['developers', 'system:authenticated'],
    });
    const denied = await kubectl(join(dir, 'admin'), '--as', 'dev', 'get', 'nodes');
    expect(denied.stderr).toContain(
      'nodes is forbidden: User "dev" cannot list resource "nodes" in API group "" at the cluster scope',
    );
  });

  it('client-node loads the kubeconfig and authenticates with it', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(join(dir, 'dev'));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const cms = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(cms.items.map((i) => i.metadata?.name)).toContain('from-dev');
    const err = await core.createNode({ body: { metadata: { name: 'nope' } } }).catch((e) => e);
    expect(err.code).toBe(403);
    expect(JSON.parse(err.body).message).toBe(
      'nodes is forbidden: User "dev" cannot create resource "nodes" in API group "" at the cluster scope',
    );
  });

  it('refuses a client identity for a plain-HTTP cluster', async () => {
    const { startLocalCluster } = await import('../../../../../dev/local/kube-api/index.ts');
    const plain = await startLocalCluster();
    try {
      await expect(plain.writeKubeconfig(join(dir, 'plain'), c.pki.admin)).rejects.toThrow(
        /needs a cluster started with `tls`/,
      );
    } finally {
      await plain.stop();
    }
  });
});

describe('RBAC on etcd storage', () => {
  it('seeds the policy and sees a new binding at once', async () => {
    const { startEtcd } = await import('../../../../../dev/local/etcd/launch.ts');
    const { createEtcdStorage } = await import('../../../../../dev/local/kube-api/storage/etcd.ts');
    const etcd = await startEtcd();
    try {
      const storage = await createEtcdStorage({ endpoints: [etcd.endpoint] });
      const c = await startAuthCluster({ storage });
      try {
        const viewer = await identity('etcd-viewer');
        expect((await c.raw(viewer, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(403);
        await c.admin(
          'POST',
          `/apis/${RBAC}/v1/clusterrolebindings`,
          clusterRoleBinding('etcd-viewer', 'view', [user('etcd-viewer')]),
        );
        expect((await c.raw(viewer, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
        expect((await c.admin('GET', `/apis/${RBAC}/v1/clusterroles/view`)).rules).toHaveLength(10);
      } finally {
        await c.stop();
        await storage.close();
      }
    } finally {
      await etcd.stop();
    }
  });
});
