/**
 * Secrets never leak: the whole system on a local fleet (2 clusters × 2 pools) converges, gets a pool
 * created and deleted, audited, rolled out, probed, and fed malformed events and a cluster whose
 * credentials do not work — while every log write, bus event, function result and error is recorded.
 * Then every key and token present in the run (the pools' Secrets, the cluster CA, the kubeconfigs) is
 * searched for in all of it, and in the state table, the dead letters and every non-Secret object of the
 * clusters. Only Secrets may hold keys.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawObjectApi } from '../../../adapters/kubernetes/raw-object-api.ts';
import { readRollout, registerCluster } from '../../../adapters/state-table/index.ts';
import { kubeconfigYaml } from '../../../core/render/kubeconfig.ts';
import type { BusActivity } from '../../../dev/local/bus/index.ts';
import { type LocalFleet, startLocalFleet } from '../../../dev/local/fleet/fleet.ts';
import { edgeNode, nodePool, PRODUCT_NAMESPACE } from '../../../dev/local/fleet/seed.ts';
import type { LocalFunction } from '../../../dev/local/lambda-runtime.ts';
import {
  AUDIT_REQUEST_DETAIL_TYPE,
  EC2_SOURCE,
  EC2_STATE_CHANGE_DETAIL_TYPE,
  RECONCILE_REQUEST_DETAIL_TYPE,
  RECONCILER_SOURCE,
} from '../../../events/index.ts';
import * as x509 from '../../../shared/x509.ts';
import { captureOutput, type OutputCapture } from '../../support/output-capture.ts';
import {
  describeFindings,
  type Finding,
  type KnownSecret,
  kubeconfigSecrets,
  privateKeysInPem,
  SecretScanner,
  secretObjectSecrets,
} from '../../support/secret-scan.ts';
import { waitFor } from '../../support/wait.ts';

/** Every kind the clusters hold besides Secrets: none of them may carry key material. */
const SCANNED_KINDS: [string, string][] = [
  ['v1', 'Event'],
  ['events.k8s.io/v1', 'Event'],
  ['poolspirit.io/v1alpha1', 'PoolSpirit'],
  ['apps/v1', 'Deployment'],
  ['apps/v1', 'ReplicaSet'],
  ['v1', 'Pod'],
  ['v1', 'ConfigMap'],
  ['v1', 'Service'],
  ['v1', 'ServiceAccount'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
  ['apps.openyurt.io/v1beta1', 'NodePool'],
  ['v1', 'Node'],
  ['coordination.k8s.io/v1', 'Lease'],
];
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];
const BROKEN = 'cluster-broken';

type Text = { where: string; text: string };

describe('secrets never leak: local fleet 2 clusters × 2 pools', () => {
  let fleet: LocalFleet;
  let dir: string;
  let capture: OutputCapture | undefined;
  const previousLogLevel = process.env.POWERTOOLS_LOG_LEVEL;
  const activities: BusActivity[] = [];
  const fleetLog: string[] = [];
  /** Results and errors of every function invocation, and errors the test itself caught. */
  const outcomes: Text[] = [];
  const secrets = new Map<string, KnownSecret>();

  const remember = (found: KnownSecret[]) => {
    for (const s of found) secrets.set(`${s.label}|${s.bytes.toString('hex')}`, s);
  };
  /** The keys are snapshotted several times: a deleted pool's Secrets are gone by the end of the run. */
  const collectClusterSecrets = async () => {
    for (const c of fleet.clusters) {
      const list = await RawObjectApi.fromKubeConfig(c.kubeConfig).list('v1', 'Secret');
      for (const s of list.items as any[])
        remember(secretObjectSecrets(s).map((k) => ({ ...k, label: `${c.id} ${k.label}` })));
    }
  };
  const record = (fn: LocalFunction, name: string) => {
    const invoke = fn.invoke.bind(fn);
    fn.invoke = async (event: unknown) => {
      try {
        const result = await invoke(event);
        outcomes.push({ where: `${name} result`, text: JSON.stringify(result) ?? '' });
        return result;
      } catch (err) {
        outcomes.push({
          where: `${name} error`,
          text: `${(err as Error).name}: ${(err as Error).message}\n${(err as Error).stack ?? ''}`,
        });
        throw err;
      }
    };
  };
  const caught = async (where: string, run: () => Promise<unknown>) => {
    try {
      outcomes.push({ where: `${where} result`, text: JSON.stringify(await run()) ?? '' });
    } catch (err) {
      outcomes.push({ where: `${where} error`, text: `${(err as Error).message}\n${(err as Error).stack ?? ''}` });
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-secrets-'));
    // Everything the functions can log, not only errors: a leak at debug level is still a leak.
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    capture = captureOutput();
    fleet = await startLocalFleet({
      clusters: 2,
      pools: 2,
      nodesPerPool: 1,
      stateDir: dir,
      readyDelayMs: 20,
      retryBaseDelayMs: 20,
      // Reconcile containers on the main thread: a worker thread's writes would escape the capture.
      functionThreads: 0,
      log: (line) => fleetLog.push(line),
      onBusActivity: (a) => activities.push(structuredClone(a)),
    });
    for (const [fn, name] of [
      [fleet.reconcile, 'reconcile'],
      [fleet.audit, 'audit'],
      [fleet.rollout, 'rollout'],
      [fleet.probe, 'probe'],
      [fleet.cloudEvents, 'cloud-events'],
    ] as const) {
      record(fn, name);
    }
    await fleet.waitConverged(60_000);
  }, 90_000);

  afterAll(async () => {
    capture?.stop();
    await fleet?.stop();
    if (previousLogLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
    else process.env.POWERTOOLS_LOG_LEVEL = previousLogLevel;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the fleet through create, delete, audit, rollout, probe and forced errors', async () => {
    await collectClusterSecrets();
    const api = RawObjectApi.fromKubeConfig(fleet.clusters[1].kubeConfig);

    // A pool created and deleted.
    await api.createJson(nodePool('shop-17', 'Edge'));
    await api.createJson(edgeNode('shop-17-node-0', 'shop-17'));
    await waitFor(
      async () => {
        const ps: any = await api.read({
          apiVersion: 'poolspirit.io/v1alpha1',
          kind: 'PoolSpirit',
          metadata: { name: 'shop-17' },
        });
        return (ps.status?.conditions ?? []).some((c: any) => c.type === 'Available' && c.status === 'True');
      },
      30_000,
      'shop-17 Available',
    );
    await collectClusterSecrets();
    await api.delete({ apiVersion: 'apps.openyurt.io/v1beta1', kind: 'NodePool', metadata: { name: 'shop-17' } });
    await waitFor(
      async () => {
        const left = await api.list('v1', 'Secret', PRODUCT_NAMESPACE);
        return !left.items.some((s) => s.metadata?.labels?.['poolspirit.io/pool'] === 'shop-17');
      },
      30_000,
      'the Secrets of shop-17 gone',
    );

    // The scheduled audit, fanned out through the bus.
    const auditsBefore = fleet.audit.stats.invocations;
    await fleet.audit.invoke({
      version: '0',
      id: 'sec-tick-1',
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'local',
      resources: [],
      detail: {},
    });
    await waitFor(() => fleet.audit.stats.invocations >= auditsBefore + 3, 30_000, 'one audit per cluster');

    // A rollout to both clusters.
    await fleet.rollout.invoke({
      command: 'start',
      rollout: {
        id: 'sec-rollout',
        patch: { agent: { version: '0.2.0' } },
        selector: { environment: 'local' },
        maxConcurrency: '2',
        soak: '1s',
        progressDeadline: '30s',
      },
    });
    const rollout = await waitFor(
      async () => {
        await fleet.rollout.invoke({ command: 'tick', rolloutId: 'sec-rollout' });
        const s = await readRollout(fleet.table, 'sec-rollout');
        return s && TERMINAL.includes(s.phase) ? s : undefined;
      },
      45_000,
      'the rollout to finish',
      250,
    );
    expect(rollout.phase, rollout.reason).toBe('Succeeded');
    await caught('probe cluster-01', () => fleet.probe.invoke({ clusterId: 'cluster-01' }));

    // A registered cluster whose kubeconfig carries credentials (a token and a client key) and answers nothing.
    const brokenKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const brokenPath = join(dir, 'broken.kubeconfig');
    const token = `sec-${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')}`;
    const broken = kubeconfigYaml({
      cluster: BROKEN,
      server: 'https://127.0.0.1:1',
      caPem: 'not-a-ca',
      certPem: 'not-a-cert',
      keyPem: brokenKey,
      user: 'admin',
    }).replace('client-certificate-data:', `token: ${token}\n      client-certificate-data:`);
    await writeFile(brokenPath, broken, { mode: 0o600 });
    await registerCluster(
      fleet.table,
      { id: BROKEN, access: { kind: 'kubeconfig-file', path: brokenPath }, labels: { environment: 'broken' } },
      new Date(),
    );
    const envelope = {
      version: '0',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'local',
      resources: [],
    };
    await caught('reconcile broken cluster', () =>
      fleet.reconcile.invoke({
        ...envelope,
        id: 'sec-r1',
        source: RECONCILER_SOURCE,
        'detail-type': RECONCILE_REQUEST_DETAIL_TYPE,
        detail: { clusterId: BROKEN, nodePool: 'pool-00', reason: 'test', requestedBy: 'test' },
      }),
    );
    await caught('audit broken cluster', () =>
      fleet.audit.invoke({
        ...envelope,
        id: 'sec-a1',
        source: RECONCILER_SOURCE,
        'detail-type': AUDIT_REQUEST_DETAIL_TYPE,
        detail: { clusterId: BROKEN, runId: 'sec-a1', requestedBy: 'test' },
      }),
    );
    await caught('probe broken cluster', () => fleet.probe.invoke({ clusterId: BROKEN }));
    await caught('reconcile malformed event', () =>
      fleet.reconcile.invoke({
        ...envelope,
        id: 'sec-r2',
        source: RECONCILER_SOURCE,
        'detail-type': RECONCILE_REQUEST_DETAIL_TYPE,
        detail: { clusterId: 7 },
      }),
    );
    // Through the bus: a malformed audit request (retried, then dead-lettered) and an EC2 event that makes
    // the cloud-events function search every cluster, the broken one included.
    fleet.bus.putEvents([
      {
        Source: RECONCILER_SOURCE,
        DetailType: AUDIT_REQUEST_DETAIL_TYPE,
        Detail: JSON.stringify({ clusterId: 42 }),
        EventBusName: fleet.eventBusName,
      },
    ]);
    fleet.bus.injectEvent({
      source: EC2_SOURCE,
      'detail-type': EC2_STATE_CHANGE_DETAIL_TYPE,
      detail: { 'instance-id': 'i-0123456789abcdef0', state: 'terminated' },
    });
    await waitFor(
      () => fleet.bus.deadLetters().length >= 2,
      30_000,
      'the malformed audit request and the EC2 event dead-lettered',
    );
    await fleet.bus.drain();

    expect(outcomes.filter((o) => o.where.endsWith('error')).length).toBeGreaterThanOrEqual(4);
    remember(kubeconfigSecrets(broken, `kubeconfig ${BROKEN}`));
  }, 150_000);

  it('finds no key, token or kubeconfig content outside Secrets', async () => {
    capture!.stop();
    await collectClusterSecrets();
    const caPem = x509.PemConverter.encode(
      await crypto.subtle.exportKey('pkcs8', fleet.clusterCa.keys.privateKey),
      'PRIVATE KEY',
    );
    remember(privateKeysInPem(caPem, 'fleet cluster CA'));
    for (const c of fleet.clusters)
      remember(kubeconfigSecrets(await readFile(c.kubeconfigPath, 'utf8'), `kubeconfig ${c.id}`));
    const known = [...secrets.values()];
    const byKind = (kind: string) => known.filter((s) => s.kind === kind).length;
    // 2 clusters × 2 pools + shop-17, eight key pairs each, plus the cluster CA and the broken kubeconfig's key.
    expect(byKind('private-key'), 'private keys collected').toBeGreaterThanOrEqual(5 * 8 + 2);
    expect(byKind('token'), 'tokens collected').toBeGreaterThanOrEqual(1);

    const logs: Text[] = [
      ...capture!.writes.map((w, i) => ({ where: `log write ${i + 1} (${w.stream})`, text: w.text })),
      ...fleetLog.map((text, i) => ({ where: `fleet log line ${i + 1}`, text })),
    ];
    const events: Text[] = activities.map((a, i) => ({
      where: `bus activity ${i + 1} (${a.type})`,
      text: JSON.stringify(a),
    }));
    const deadLetters: Text[] = fleet.bus
      .deadLetters()
      .map((d, i) => ({ where: `dead letter ${i + 1}`, text: JSON.stringify(d) }));
    const items: Text[] = [];
    let startKey: any;
    do {
      const page = await fleet.dynamo.client.send(
        new ScanCommand({ TableName: 'pool-spirit-local-state', ExclusiveStartKey: startKey }),
      );
      for (const item of page.Items ?? [])
        items.push({
          where: `table item ${item.pk?.S ?? ''} ${item.sk?.S ?? ''}`,
          text: JSON.stringify(item, binaryAsText),
        });
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    const objects: Text[] = [];
    for (const c of fleet.clusters) {
      const api = RawObjectApi.fromKubeConfig(c.kubeConfig);
      for (const [apiVersion, kind] of SCANNED_KINDS) {
        const list = await api.list(apiVersion, kind).catch(() => ({ items: [] }));
        for (const o of list.items as any[])
          objects.push({
            where: `${c.id} ${kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`,
            text: JSON.stringify(o),
          });
      }
    }
    const stateFiles: Text[] = [];
    for (const f of await readdir(dir, { recursive: true, withFileTypes: true })) {
      // Kubeconfigs are where credentials belong; everything else the stack wrote is scanned.
      if (f.isFile() && !f.name.endsWith('.kubeconfig'))
        stateFiles.push({ where: `state file ${f.name}`, text: await readFile(join(f.parentPath, f.name), 'utf8') });
    }

    const scanner = new SecretScanner(known);
    const groups = { logs, events, deadLetters, outcomes, items, objects, stateFiles };
    const findings: Finding[] = Object.values(groups).flatMap((texts) =>
      texts.flatMap((t) => scanner.scan(t.where, t.text)),
    );
    const counts = Object.entries(groups)
      .map(([k, v]) => `${k} ${v.length}`)
      .join(', ');
    console.info(
      `secret scan: ${known.length} secrets (${byKind('private-key')} private keys, ${byKind('token')} tokens) in ${counts}; ${scanner.stats.characters} characters`,
    );

    expect(logs.length, 'log writes captured').toBeGreaterThan(50);
    expect(events.length, 'bus events seen').toBeGreaterThan(20);
    expect(deadLetters.length, 'dead letters').toBeGreaterThanOrEqual(2);
    expect(items.length, 'table items').toBeGreaterThan(10);
    expect(objects.filter((o) => / Event /.test(o.where)).length, 'Kubernetes Events').toBeGreaterThan(0);
    expect(findings, `secrets found (scanned ${counts}):\n${describeFindings(findings)}`).toEqual([]);

    // In-situ control: the same scanner finds every key of the live Secrets in those Secrets.
    for (const c of fleet.clusters) {
      const live = (await RawObjectApi.fromKubeConfig(c.kubeConfig).list('v1', 'Secret')).items as any[];
      const inSecrets = new Set(
        live.flatMap((s) => scanner.scan(`${c.id} Secret ${s.metadata.name}`, JSON.stringify(s))).map((f) => f.what),
      );
      const expected = live.flatMap((s) => secretObjectSecrets(s)).map((k) => `known ${k.kind} (${c.id} ${k.label})`);
      expect(expected.length).toBeGreaterThanOrEqual(2 * 9);
      expect(
        expected.filter((e) => !inSecrets.has(e)),
        `keys of ${c.id} the scanner missed in their own Secrets`,
      ).toEqual([]);
    }
  }, 60_000);
});

/** DynamoDB binary attributes as base64 text, so an encoded key in one is scanned like any other text. */
function binaryAsText(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;
}
