/**
 * Cluster access the fleet refuses — exec and auth-provider credentials, file references, servers that
 * are plain http off loopback or link-local/metadata addresses, missing or oversized kubeconfigs — refused
 * twice: by `spiritctl clusters add` (the real CLI, as a child process) and again by the reconcile function
 * when a registry entry or a secret was written without the CLI. Every refusal names the field, and no
 * secret from the input appears in the message or in the function's logs.
 */

import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import type { SecretSource } from '../../../adapters/cluster-access/index.ts';
import { ClusterAccessError, createClusterAccess } from '../../../adapters/cluster-access/index.ts';
import { createKubeTransport } from '../../../adapters/kubernetes/http/index.ts';
import {
  type ClusterAccess,
  createStateTable,
  getCluster,
  keys,
  putItem,
  registerCluster,
  type StateTable,
} from '../../../adapters/state-table/index.ts';
import { TerminalError } from '../../../core/outcome.ts';
import { ensureTable, type LocalDynamo, startLocalDynamo } from '../../../dev/local/dynamodb.ts';
import { kubeconfigYaml, type LocalCluster, startLocalCluster } from '../../../dev/local/kube-api/index.ts';
import { createCertificateAuthority } from '../../../dev/local/pki.ts';
import { createReconcileHandler, reconcileDeps } from '../../../functions/reconcile/handler.ts';
import { lambdaContext } from '../../functions/reconcile/harness.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const TABLE = 'refused-access-state';
/** Token, key and file text that must never be echoed. */
const SECRET = `s3cret-${randomUUID()}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function spiritctl(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'spiritctl.mjs'), ...args],
      { cwd: repoRoot, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
  });
}

describe('refused cluster access', () => {
  let dynamo: LocalDynamo;
  let table: StateTable;
  let dir: string;
  let flags: string[];
  /** Created by the exec attack if anything ever ran it. */
  let touched: string;
  let local: LocalCluster;
  let attacks: Array<{ name: string; field: string; text: string }>;
  let caPem: string;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureTable(dynamo.client, TABLE);
    table = createStateTable({ client: dynamo.client, tableName: TABLE });
    flags = ['--dynamo-endpoint', dynamo.endpoint, '--table', TABLE];
    dir = await mkdtemp(join(tmpdir(), 'refused-access-'));
    touched = join(dir, 'exec-ran');
    // Files a file reference would make the function read and send away.
    await writeFile(join(dir, 'secret.pem'), `-----BEGIN CERTIFICATE-----\n${SECRET}\n-----END CERTIFICATE-----\n`);
    await writeFile(join(dir, 'token'), SECRET);
    caPem = (await createCertificateAuthority('refused-access-ca', 1)).certPem;
    const https = { server: 'https://c.example:6443' };
    attacks = [
      {
        name: 'exec',
        field: 'users[0].user.exec',
        text: kubeconfig(https, {
          token: SECRET,
          exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', `touch ${touched}`] },
        }),
      },
      {
        name: 'auth-provider',
        field: 'users[0].user.auth-provider',
        text: kubeconfig(https, { 'auth-provider': { name: 'oidc', config: { 'id-token': SECRET } } }),
      },
      {
        name: 'client-certificate',
        field: 'users[0].user.client-certificate',
        text: kubeconfig(https, { 'client-certificate': join(dir, 'secret.pem'), 'client-key-data': b64(SECRET) }),
      },
      {
        name: 'client-key',
        field: 'users[0].user.client-key',
        text: kubeconfig(https, { 'client-certificate-data': b64(caPem), 'client-key': join(dir, 'secret.pem') }),
      },
      {
        name: 'certificate-authority',
        field: 'clusters[0].cluster.certificate-authority',
        text: kubeconfig({ ...https, 'certificate-authority': join(dir, 'secret.pem') }, { token: SECRET }),
      },
      {
        name: 'token-file',
        field: 'users[0].user.tokenFile',
        text: kubeconfig(https, { tokenFile: join(dir, 'token') }),
      },
      {
        name: 'metadata-server',
        field: 'clusters[0].cluster.server',
        text: kubeconfig({ server: 'http://169.254.169.254/latest' }, { token: SECRET }),
      },
      {
        name: 'metadata-decimal',
        field: 'clusters[0].cluster.server',
        text: kubeconfig({ server: 'http://2852039166/' }, { token: SECRET }),
      },
      {
        name: 'http-off-loopback',
        field: 'clusters[0].cluster.server',
        text: kubeconfig({ server: 'http://10.1.2.3:8080' }, { token: SECRET }),
      },
      { name: 'oversized', field: '(document)', text: kubeconfig(https, { token: SECRET + 'x'.repeat(300 * 1024) }) },
    ];
    for (const a of attacks) await writeFile(join(dir, `${a.name}.kubeconfig`), a.text, { mode: 0o600 });
    // The local stack's own registration: a plain-http loopback cluster with a kubeconfig it writes.
    local = await startLocalCluster({ port: 0, name: 'local-ok' });
    await local.writeKubeconfig(join(dir, 'local.kubeconfig'));
  }, 60_000);
  afterAll(async () => {
    await local?.stop();
    await dynamo?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('control: the exec command of the attack does create the file when run directly', () => {
    const control = join(dir, 'control-ran');
    execFileSync('/bin/sh', ['-c', `touch ${control}`]);
    expect(existsSync(control)).toBe(true);
  });

  describe('at `spiritctl clusters add`', () => {
    it('refuses each kubeconfig attack with exit 2, naming the field once, echoing no secret, registering nothing', async () => {
      for (const a of attacks) {
        const path = join(dir, `${a.name}.kubeconfig`);
        const run = await spiritctl(['clusters', 'add', '--id', `cli-${a.name}`, '--kubeconfig', path, ...flags]);
        expect(run.code, `${a.name}: ${run.stderr}`).toBe(2);
        expect(run.stderr).toContain(`--kubeconfig ${path}: ${a.field}: `);
        expect(run.stderr.split(a.field).length - 1, run.stderr).toBe(1);
        expect(run.stderr).not.toContain(SECRET);
        expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
        expect(await getCluster(table, `cli-${a.name}`)).toBeUndefined();
      }
      expect(existsSync(touched)).toBe(false);
    }, 240_000);

    it('refuses --url and --endpoint at link-local and metadata addresses, and plain http off loopback', async () => {
      const urls = [
        'http://169.254.169.254/latest',
        'http://2852039166/',
        'http://0xa9fea9fe/',
        'http://[::ffff:169.254.169.254]/',
        'http://[fd00:ec2::254]/',
        'http://metadata.google.internal/',
        'http://10.0.0.1:8080',
        `https://admin:${SECRET}@169.254.170.2/`,
      ];
      for (const [i, url] of urls.entries()) {
        const run = await spiritctl(['clusters', 'add', '--id', `url-${i}`, '--url', url, ...flags]);
        expect(run.code, `${url}: ${run.stderr}`).toBe(2);
        expect(run.stderr).toMatch(/^spiritctl clusters add: --url: /);
        expect(run.stderr).not.toContain(SECRET);
        expect(await getCluster(table, `url-${i}`)).toBeUndefined();
      }
      await writeFile(join(dir, 'ca.pem'), caPem);
      const eks = await spiritctl([
        'clusters',
        'add',
        '--id',
        'eks-meta',
        '--eks',
        'x',
        '--region',
        'eu-west-1',
        '--endpoint',
        'https://169.254.169.254',
        '--ca-file',
        join(dir, 'ca.pem'),
        ...flags,
      ]);
      expect(eks).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/^spiritctl clusters add: --endpoint: refused: a link-local/),
      });
    }, 240_000);

    it('refuses a --kubeconfig that does not exist: exit 2, naming the flag and the path, no stack trace', async () => {
      const missing = join(dir, 'no-such.kubeconfig');
      const run = await spiritctl(['clusters', 'add', '--id', 'missing', '--kubeconfig', missing, ...flags]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`--kubeconfig: ${missing} does not exist`);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }, 60_000);

    it("accepts a valid inline https kubeconfig and the local stack's loopback kubeconfig", async () => {
      await writeFile(
        join(dir, 'ok.kubeconfig'),
        kubeconfig({ server: 'https://c.example:6443', 'certificate-authority-data': b64(caPem) }, { token: SECRET }),
      );
      const ok = await spiritctl([
        'clusters',
        'add',
        '--id',
        'ok-https',
        '--kubeconfig',
        join(dir, 'ok.kubeconfig'),
        ...flags,
      ]);
      expect(ok, ok.stderr).toMatchObject({ code: 0 });
      const localRun = await spiritctl([
        'clusters',
        'add',
        '--id',
        'ok-local',
        '--kubeconfig',
        join(dir, 'local.kubeconfig'),
        ...flags,
      ]);
      expect(localRun, localRun.stderr).toMatchObject({ code: 0 });
      const url = await spiritctl(['clusters', 'add', '--id', 'ok-url', '--url', local.url, ...flags]);
      expect(url, url.stderr).toMatchObject({ code: 0 });
    }, 120_000);
  });

  describe('when a function loads access that bypassed the CLI', () => {
    /** A registry item written straight to the table, as something other than the CLI might. */
    async function writeRaw(id: string, access: ClusterAccess) {
      await putItem(table, {
        Item: { ...keys.cluster(id), id, access, labels: {}, updatedAt: new Date().toISOString() },
      });
    }

    /** The real reconcile handler for one cluster; returns the error and everything it logged. */
    async function reconcileOnce(clusterId: string, secrets?: SecretSource): Promise<{ error: Error; logs: string }> {
      let logs = '';
      const capture = (s: unknown) => {
        logs += String(s);
        return true;
      };
      const out = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
      const err = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
      const metrics = new Metrics({ namespace: 'RefusedAccessTest', serviceName: 'reconcile-test' });
      Object.assign(metrics, {
        console: {
          log: (line: string) => {
            logs += line;
          },
        },
      });
      try {
        const handler = createReconcileHandler(
          reconcileDeps({
            table,
            clusterAccess: createClusterAccess({ secrets }),
            logger: new Logger({ serviceName: 'reconcile-test', logLevel: 'DEBUG' }),
            metrics,
          }),
        );
        const event = {
          version: '0',
          id: randomUUID(),
          account: '000000000000',
          time: new Date().toISOString(),
          region: 'local',
          resources: [],
          source: 'pool-spirit.reconciler',
          'detail-type': 'Reconcile Request',
          detail: { clusterId, nodePool: 'pool-00', reason: 'test', requestedBy: 'test' },
        };
        const error = await handler(event, lambdaContext(randomUUID())).then(
          () => undefined,
          (e: Error) => e,
        );
        if (!error) throw new Error(`reconcile of ${clusterId} succeeded`);
        return { error, logs };
      } finally {
        out.mockRestore();
        err.mockRestore();
      }
    }

    it('refuses each kubeconfig attack written straight to the registry: field named, nothing run, no secret logged', async () => {
      for (const a of attacks) {
        const id = `raw-${a.name}`;
        await writeRaw(id, { kind: 'kubeconfig-file', path: join(dir, `${a.name}.kubeconfig`) });
        const { error, logs } = await reconcileOnce(id);
        expect(error.message, a.name).toContain(`(at ${a.field})`);
        expect(error.message).toContain(`cluster ${id} (access kubeconfig-file): refused: `);
        // Terminal: the same access is refused on every load, so it is not retried (functions/common/terminal.ts).
        expect(error).toBeInstanceOf(TerminalError);
        expect((error as TerminalError).reason).toMatchObject({ kind: 'access-refused', field: a.field });
        expect(error.message).not.toContain(SECRET);
        expect(logs).toContain(a.field);
        expect(logs).not.toContain(SECRET);
      }
      expect(existsSync(touched)).toBe(false);
    }, 120_000);

    it('refuses the same attacks from a secret', async () => {
      const texts = new Map(attacks.map((a) => [`pool-spirit/test/${a.name}`, a.text]));
      const secrets: SecretSource = { getSecretString: async (id) => texts.get(id)! };
      for (const a of attacks) {
        const id = `sec-${a.name}`;
        await writeRaw(id, { kind: 'secret', secretId: `pool-spirit/test/${a.name}` });
        const { error, logs } = await reconcileOnce(id, secrets);
        expect(error.message, a.name).toContain(`(at ${a.field})`);
        expect(error.message).not.toContain(SECRET);
        expect(logs).not.toContain(SECRET);
      }
      expect(existsSync(touched)).toBe(false);
    }, 120_000);

    it('refuses url and eks registrations at metadata addresses', async () => {
      await writeRaw('raw-url-meta', { kind: 'url', url: 'http://169.254.169.254/latest' });
      await writeRaw('raw-url-mapped', { kind: 'url', url: 'http://[::ffff:a9fe:a9fe]/' });
      await writeRaw('raw-url-http', { kind: 'url', url: 'http://10.0.0.1:8080' });
      await writeRaw('raw-eks-meta', {
        kind: 'eks',
        clusterName: 'x',
        region: 'eu-west-1',
        endpoint: 'https://169.254.169.254',
        caData: 'QQ==',
      });
      for (const [id, field] of [
        ['raw-url-meta', 'access.url'],
        ['raw-url-mapped', 'access.url'],
        ['raw-url-http', 'access.url'],
        ['raw-eks-meta', 'access.endpoint'],
      ]) {
        const { error } = await reconcileOnce(id);
        expect(error.message, id).toContain(`(at ${field})`);
      }
      // And registerCluster itself refuses them (what the local stack and the CLI write through).
      await expect(
        registerCluster(table, { id: 'reg-meta', access: { kind: 'url', url: 'http://169.254.169.254/' } }, new Date()),
      ).rejects.toThrow(/access\.url: refused: a link-local/);
    }, 60_000);

    it('the resolver reports refusals as ClusterAccessError invalid with the field', async () => {
      const reg = (await getCluster(table, 'raw-exec'))!;
      const err = await createClusterAccess()
        .connectionFor(reg)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(ClusterAccessError);
      expect(err).toMatchObject({ reason: 'invalid', field: 'users[0].user.exec', clusterId: 'raw-exec' });
      expect(existsSync(touched)).toBe(false);
    });

    it("still loads the local stack's registration and a valid inline https kubeconfig", async () => {
      // As dev/local/fleet registers its clusters.
      await registerCluster(
        table,
        {
          id: 'local-ok',
          access: { kind: 'kubeconfig-file', path: join(dir, 'local.kubeconfig') },
          labels: { environment: 'local' },
        },
        new Date(),
      );
      const connection = await createClusterAccess().connectionFor((await getCluster(table, 'local-ok'))!);
      expect(connection.server).toBe(local.url);
      const transport = createKubeTransport(connection);
      try {
        expect(await transport.request({ method: 'GET', path: '/version' })).toMatchObject({
          major: expect.any(String),
        });
      } finally {
        transport.close();
      }
      const inline = await createClusterAccess().connectionFor((await getCluster(table, 'ok-https'))!);
      expect(inline).toMatchObject({ server: 'https://c.example:6443', caPem, token: SECRET });
      const url = await createClusterAccess().connectionFor((await getCluster(table, 'ok-url'))!);
      expect(url.server).toBe(local.url);
      // kubeconfigYaml with TLS and a client identity: inline data only, accepted.
      expect(kubeconfigYaml('x', 'https://127.0.0.1:1', { caPem })).toContain('certificate-authority-data');
    });
  });
});
