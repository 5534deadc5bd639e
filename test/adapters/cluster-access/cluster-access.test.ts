import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretSource } from '../../../adapters/cluster-access/index.ts';
import {
  ClusterAccessError,
  createClusterAccess,
  EKS_TOKEN_PREFIX,
  secretsManagerSource,
} from '../../../adapters/cluster-access/index.ts';
import type { ClusterRegistration } from '../../../adapters/state-table/index.ts';

const SECRET_MARKER = 'do-not-leak-7f3a';
const kubeconfig = (server: string, user: Record<string, unknown> = { token: SECRET_MARKER }) => `
apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "${server}" } }]
users: [{ name: u, user: ${JSON.stringify(user)} }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }, { name: other, context: { cluster: c, user: u } }]
current-context: ctx
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cluster-access-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function reg(id: string, access: ClusterRegistration['access']): ClusterRegistration {
  return { id, access, labels: {} };
}

async function expectSafeFailure(p: Promise<unknown>, reason: string, id: string) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClusterAccessError);
  const e = err as ClusterAccessError;
  expect(e.reason).toBe(reason);
  expect(e.message.startsWith(`cluster ${id} (access `)).toBe(true);
  expect(e.message).not.toContain(SECRET_MARKER);
  expect(e.message).not.toContain(dir);
  expect(JSON.stringify(e)).not.toContain(SECRET_MARKER);
  expect(e.cause).toBeUndefined();
}

describe('cluster access', () => {
  it('loads a kubeconfig file, honouring the context', async () => {
    const path = join(dir, 'kc.yaml');
    await writeFile(path, kubeconfig('http://127.0.0.1:6443'));
    // `other` points at a second cluster and user: the registered context, not current-context, decides.
    await writeFile(
      path,
      kubeconfig('http://127.0.0.1:6443')
        .replace(
          'clusters: [',
          'clusters: [{ name: c2, cluster: { server: "https://10.9.9.9:443", insecure-skip-tls-verify: true } }, ',
        )
        .replace('users: [', 'users: [{ name: u2, user: { token: other-token } }, ')
        .replace(
          '{ name: other, context: { cluster: c, user: u } }',
          '{ name: other, context: { cluster: c2, user: u2 } }',
        ),
    );
    const current = await createClusterAccess().connectionFor(reg('c0', { kind: 'kubeconfig-file', path }));
    expect(current).toMatchObject({ server: 'http://127.0.0.1:6443', token: SECRET_MARKER });
    const connection = await createClusterAccess().connectionFor(
      reg('c1', { kind: 'kubeconfig-file', path, context: 'other' }),
    );
    expect(connection).toMatchObject({
      server: 'https://10.9.9.9:443',
      insecureSkipTlsVerify: true,
      token: 'other-token',
    });
  });

  it('builds a config for a bare URL', async () => {
    const connection = await createClusterAccess().connectionFor(
      reg('c1', { kind: 'url', url: 'http://127.0.0.1:1234', caData: Buffer.from('PEM TEXT').toString('base64') }),
    );
    expect(connection).toEqual({ server: 'http://127.0.0.1:1234', caPem: 'PEM TEXT', insecureSkipTlsVerify: false });
  });

  it('signs an EKS token with the injected credentials', async () => {
    const access = createClusterAccess({
      awsCredentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'x' }),
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    const connection = await access.connectionFor(
      reg('prod', {
        kind: 'eks',
        clusterName: 'prod-1',
        region: 'eu-west-1',
        endpoint: 'https://abc.eks.amazonaws.com',
        caData: 'QUJD',
      }),
    );
    expect(connection.token?.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    expect(connection).toMatchObject({ server: 'https://abc.eks.amazonaws.com', caPem: 'ABC' });
  });

  it('reads a kubeconfig from the secret store and caches it until the TTL', async () => {
    let calls = 0;
    let clock = new Date('2026-01-01T00:00:00Z');
    const secrets: SecretSource = {
      getSecretString: async () => {
        calls++;
        return kubeconfig('https://10.0.0.1');
      },
    };
    const access = createClusterAccess({ secrets, now: () => clock, cacheTtlMs: 60_000 });
    const c = reg('c1', { kind: 'secret', secretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:k' });
    await access.connectionFor(c);
    await access.connectionFor(c);
    expect(calls).toBe(1);
    clock = new Date(clock.getTime() + 60_001);
    await access.connectionFor(c);
    expect(calls).toBe(2);
    access.forget('c1');
    await access.connectionFor(c);
    expect(calls).toBe(3);
  });

  it('fails with the cluster id and access kind only, never the path, secret or library message', async () => {
    const access = createClusterAccess({
      secrets: {
        getSecretString: async (id) => {
          if (id === 'missing')
            throw Object.assign(new Error(`no secret ${SECRET_MARKER}`), { name: 'ResourceNotFoundException' });
          if (id === 'exec') return kubeconfig('https://x', { exec: { command: 'aws', args: ['eks', 'get-token'] } });
          if (id === 'file') return kubeconfig('https://x', { tokenFile: `/etc/${SECRET_MARKER}` });
          return `not: [valid ${SECRET_MARKER}`;
        },
      },
    });
    await expectSafeFailure(
      access.connectionFor(reg('c1', { kind: 'kubeconfig-file', path: join(dir, 'nope') })),
      'not-found',
      'c1',
    );
    const garbage = join(dir, 'garbage.yaml');
    await writeFile(garbage, `{{ ${SECRET_MARKER}`);
    await expectSafeFailure(
      access.connectionFor(reg('c2', { kind: 'kubeconfig-file', path: garbage })),
      'invalid',
      'c2',
    );
    await expectSafeFailure(
      access.connectionFor(reg('c3', { kind: 'secret', secretId: 'missing' })),
      'not-found',
      'c3',
    );
    await expectSafeFailure(access.connectionFor(reg('c4', { kind: 'secret', secretId: 'broken' })), 'invalid', 'c4');
    // A secret must not be able to make the function run a command, or read a local file for a server it names.
    await expectSafeFailure(access.connectionFor(reg('c5', { kind: 'secret', secretId: 'exec' })), 'invalid', 'c5');
    await expectSafeFailure(access.connectionFor(reg('c7', { kind: 'secret', secretId: 'file' })), 'invalid', 'c7');
    // The field at fault is named (a path into the kubeconfig, not a value).
    await expect(access.connectionFor(reg('c5', { kind: 'secret', secretId: 'exec' }))).rejects.toMatchObject({
      field: expect.stringMatching(/exec/),
    });
    await expect(access.connectionFor(reg('c7', { kind: 'secret', secretId: 'file' }))).rejects.toMatchObject({
      field: expect.stringMatching(/tokenFile/),
    });
    await expectSafeFailure(
      access.connectionFor(
        reg('c6', { kind: 'eks', clusterName: 'p', region: 'eu-west-1', endpoint: 'https://x', caData: 'QQ==' }),
      ),
      'unavailable',
      'c6',
    );
  });

  it('reads Secrets Manager through one client per region, and refuses a binary-only secret', async () => {
    const calls: { region?: string; secretId: unknown }[] = [];
    const made: (string | undefined)[] = [];
    const source = secretsManagerSource((region) => {
      made.push(region);
      return {
        send: async (command: { input: { SecretId: string } }) => {
          calls.push({ region, secretId: command.input.SecretId });
          return command.input.SecretId === 'binary'
            ? { SecretBinary: new Uint8Array([1]) }
            : { SecretString: 'kubeconfig text' };
        },
      } as unknown as SecretsManagerClient;
    });
    expect(await source.getSecretString('a', 'eu-west-1')).toBe('kubeconfig text');
    expect(await source.getSecretString('b', 'eu-west-1')).toBe('kubeconfig text');
    expect(made).toEqual(['eu-west-1']);
    expect(calls.map((c) => c.secretId)).toEqual(['a', 'b']);
    await expect(source.getSecretString('binary')).rejects.toMatchObject({ name: 'InvalidSecretValue' });
  });
});
