/**
 * Captures the differential corpus (fixtures/corpus.json) from real clients against the local API through
 * the kube-proxy: the kubectl acceptance cases (test/dev/local/kube-api/kubectl-suite.ts, the same commands) and one
 * reconcile of a new edge NodePool by the product's handler. Run again when the cases change:
 *
 *   node test/e2e/fidelity/capture.ts
 *
 * Left out: the owner-reference GC case and `kubectl explain` (GC is kube-controller-manager's, which the
 * real backend here does not run; OpenAPI documents are not compared).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { registerCluster } from '../../../adapters/state-table/index.ts';
import { DEFAULT_NAMESPACE } from '../../../core/index.ts';
import { kubeconfigYaml, startLocalCluster } from '../../../dev/local/kube-api/index.ts';
import { KUBECTL, requireKubeBinary } from '../../../dev/local/kube-bins/index.ts';
import { type KubeProxy, type ProxyRecord, startKubeProxy } from '../../../dev/local/kube-proxy/index.ts';
import { CLUSTER_ID, startReconcileWorld } from '../../functions/reconcile/harness.ts';
import { waitFor } from '../../support/wait.ts';
import { CORPUS_PATH, type Corpus, type CorpusCase, type CorpusRequest, identities, jsonDocuments } from './corpus.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const WIDGET_CRD = `${repo}test/dev/local/kube-api/fixtures/widget-crd.yaml`;
const NODEPOOL_CRD = `${repo}infra/crds/nodepool.yaml`;

const configMap = (name: string, ns: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;
const pod = (name: string, ns: string, labels: Record<string, string>, nodeName?: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  labels: {${Object.entries(labels)
    .map(([k, v]) => `"${k}": "${v}"`)
    .join(
      ', ',
    )}}\nspec:\n${nodeName ? `  nodeName: ${nodeName}\n` : ''}  containers:\n    - name: main\n      image: registry.k8s.io/pause:3.10\n`;
const namespace = (ns: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;

interface Kubectl {
  run(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  stream(args: string[]): { waitFor(re: RegExp): Promise<void>; stop(): Promise<void> };
}

type KubectlCase = { name: string; run(k: Kubectl, proxy: KubeProxy): Promise<void> };

const KUBECTL_CASES: KubectlCase[] = [
  {
    name: 'create namespace, get it, create it again',
    async run(k) {
      await k.run(['create', 'namespace', 'created-by-kubectl']);
      await k.run(['get', 'namespace', 'created-by-kubectl']);
      await k.run(['create', 'namespace', 'created-by-kubectl']);
    },
  },
  {
    name: 'client-side apply twice with a change, a removal, then unchanged',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('apply-1'));
      await k.run(['apply', '-f', '-'], configMap('app', 'apply-1', { mode: 'one' }));
      await k.run(['get', 'configmap', 'app', '-n', 'apply-1', '-o', 'json']);
      await k.run(['apply', '-f', '-'], configMap('app', 'apply-1', { mode: 'two', extra: 'x' }));
      await k.run(['apply', '-f', '-'], configMap('app', 'apply-1', { mode: 'two' }));
      await k.run(['apply', '-f', '-'], configMap('app', 'apply-1', { mode: 'two' }));
      await k.run(['get', 'configmap', 'app', '-n', 'apply-1', '-o', 'json']);
    },
  },
  {
    name: 'server-side apply conflict between two managers, then --force-conflicts',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('ssa-2'));
      await k.run(
        ['apply', '--server-side', '--field-manager=alice', '-f', '-'],
        configMap('shared', 'ssa-2', { key: 'alice' }),
      );
      await k.run(
        ['apply', '--server-side', '--field-manager=bob', '-f', '-'],
        configMap('shared', 'ssa-2', { key: 'bob' }),
      );
      await k.run(
        ['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', '-'],
        configMap('shared', 'ssa-2', { key: 'bob' }),
      );
      await k.run(['get', 'configmap', 'shared', '-n', 'ssa-2', '--show-managed-fields', '-o', 'json']);
    },
  },
  {
    name: 'get -w sees a patch and a create',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('watch-3'));
      await k.run(['apply', '-f', '-'], configMap('w1', 'watch-3', { v: '1' }));
      const watch = k.stream([
        'get',
        'configmaps',
        '-n',
        'watch-3',
        '-w',
        '-o',
        'jsonpath={.metadata.name}={.data.v}{"\\n"}',
      ]);
      await watch.waitFor(/w1=1\n/);
      await k.run(['patch', 'configmap', 'w1', '-n', 'watch-3', '--type=merge', '-p', '{"data":{"v":"2"}}']);
      await watch.waitFor(/w1=2\n/);
      await k.run(['apply', '-f', '-'], configMap('w2', 'watch-3', { v: 'new' }));
      await watch.waitFor(/w2=new\n/);
      await watch.stop();
    },
  },
  {
    name: 'get -w --output-watch-events: ADDED, MODIFIED, DELETED',
    async run(k, proxy) {
      await k.run(['apply', '-f', '-'], namespace('watchev-4'));
      const watch = k.stream(['get', 'configmaps', '-n', 'watchev-4', '-w', '--output-watch-events']);
      await waitFor(
        () => proxy.records().some((r) => r.verb === 'watch' && r.namespace === 'watchev-4'),
        15_000,
        'kubectl to watch',
      );
      await k.run(['apply', '-f', '-'], configMap('ev', 'watchev-4', { v: '1' }));
      await watch.waitFor(/ADDED\s+ev/);
      await k.run(['patch', 'configmap', 'ev', '-n', 'watchev-4', '--type=merge', '-p', '{"data":{"v":"2"}}']);
      await watch.waitFor(/MODIFIED\s+ev/);
      await k.run(['delete', 'configmap', 'ev', '-n', 'watchev-4']);
      await watch.waitFor(/DELETED\s+ev/);
      await watch.stop();
    },
  },
  {
    name: 'wait --for=condition=Ready completes after a status patch',
    async run(k, proxy) {
      await k.run(['apply', '-f', '-'], namespace('wait-5'));
      await k.run(['apply', '-f', '-'], pod('waiter', 'wait-5', { app: 'wait' }));
      const wait = k.stream(['wait', '-n', 'wait-5', '--for=condition=Ready', 'pod/waiter', '--timeout=30s']);
      await waitFor(
        () => proxy.records().some((r) => r.verb === 'watch' && r.namespace === 'wait-5'),
        15_000,
        'kubectl wait to watch',
      );
      await k.run([
        'patch',
        'pod',
        'waiter',
        '-n',
        'wait-5',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
      ]);
      await wait.waitFor(/condition met/);
      await wait.stop();
    },
  },
  {
    name: 'NodePool CRD printer columns, both served versions',
    async run(k) {
      await k.run(['apply', '-f', NODEPOOL_CRD]);
      await k.run(['wait', '--for=condition=Established', 'crd/nodepools.apps.openyurt.io', '--timeout=30s']);
      await k.run(
        ['apply', '-f', '-'],
        'apiVersion: apps.openyurt.io/v1beta2\nkind: NodePool\nmetadata:\n  name: hangzhou\nspec:\n  type: Edge\n',
      );
      await k.run([
        'patch',
        'nodepool',
        'hangzhou',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"readyNodeNum":3,"unreadyNodeNum":1}}',
      ]);
      await k.run(['get', 'nodepools']);
      await k.run(['get', 'nodepools.v1beta1.apps.openyurt.io', 'hangzhou', '--no-headers']);
    },
  },
  {
    name: 'custom resource printer columns, filters and priorities',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('crd-6'));
      await k.run(['apply', '-f', WIDGET_CRD]);
      await k.run(['wait', '--for=condition=Established', 'crd/widgets.e2e.example.com', '--timeout=30s']);
      await k.run(
        ['apply', '-f', '-'],
        'apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: gizmo\n  namespace: crd-6\nspec:\n  color: blue\n  size: 3\n  owner: team-a\n',
      );
      await k.run([
        'patch',
        'widget',
        'gizmo',
        '-n',
        'crd-6',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"conditions":[{"type":"Synced","status":"True"},{"type":"Ready","status":"False"}]}}',
      ]);
      await k.run(['get', 'widgets', '-n', 'crd-6']);
      await k.run(['get', 'wdg', 'gizmo', '-n', 'crd-6', '-o', 'wide']);
      await k.run(['get', 'widgets', '-A']);
    },
  },
  {
    name: 'label and field selectors on pods',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('sel-7'));
      await k.run(
        ['apply', '-f', '-'],
        [
          pod('web-a', 'sel-7', { app: 'web', tier: 'front' }, 'node-1'),
          pod('web-b', 'sel-7', { app: 'web', tier: 'back' }, 'node-2'),
          pod('db', 'sel-7', { app: 'db' }, 'node-1'),
        ].join('---\n'),
      );
      for (const sel of [
        ['-l', 'app=web'],
        ['-l', 'app!=web'],
        ['-l', 'tier in (front,middle)'],
        ['-l', 'app=web,tier notin (front)'],
        ['-l', '!tier'],
        ['--field-selector', 'spec.nodeName=node-1'],
        ['--field-selector', 'spec.nodeName!=node-1,metadata.name!=web-a'],
        ['-l', 'app=web', '--field-selector', 'spec.nodeName=node-1'],
        ['--field-selector', 'spec.bogus=1'],
        ['-l', 'app in web'],
      ]) {
        await k.run(['get', 'pods', '-n', 'sel-7', '-o', 'name', ...sel]);
      }
    },
  },
  {
    name: 'pods -o wide table; a new pod is Pending',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('podtable-8'));
      await k.run(['apply', '-f', '-'], pod('db', 'podtable-8', { app: 'db' }, 'node-1'));
      await k.run(['get', 'pods', '-n', 'podtable-8', '-o', 'wide']);
      await k.run(['get', 'pod', 'db', '-n', 'podtable-8', '-o', 'json']);
    },
  },
  {
    name: 'get --chunk-size pages with limit/continue',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('page-9'));
      await k.run(
        ['apply', '-f', '-'],
        Array.from({ length: 7 }, (_, i) => configMap(`page-${i}`, 'page-9', { i: String(i) })).join('---\n'),
      );
      await k.run(['get', 'configmaps', '-n', 'page-9', '--chunk-size=3', '-o', 'name']);
    },
  },
  {
    name: 'api-resources lists built-in and custom resources',
    async run(k) {
      await k.run(['api-resources']);
    },
  },
  {
    name: 'version of the server',
    async run(k) {
      await k.run(['version', '-o', 'json']);
    },
  },
  {
    name: 'bad input: unknown fields, invalid values and names, a missing namespace',
    async run(k) {
      await k.run(['apply', '-f', '-'], namespace('strict-10'));
      await k.run(['apply', '-f', '-'], `${configMap('strict', 'strict-10', { a: 'b' })}spec:\n  replicas: 2\n`);
      await k.run(['get', 'configmap', 'strict', '-n', 'strict-10']);
      await k.run(
        ['apply', '-f', '-'],
        'apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: strict-10\nspec:\n  color: red\n  shape: round\n',
      );
      await k.run(
        ['apply', '-f', '-'],
        'apiVersion: e2e.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: strict-10\nspec:\n  color: purple\n',
      );
      await k.run(['apply', '-f', '-'], configMap('Bad_Name', 'strict-10', { a: 'b' }));
      await k.run(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: has.dots\n');
      await k.run(['apply', '-f', '-'], configMap('x', 'does-not-exist', { a: 'b' }));
    },
  },
];

function kubectlThrough(proxyUrl: string, dir: string): Kubectl {
  const kubeconfig = join(dir, 'kubeconfig');
  const base = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache')];
  const env = { ...process.env, HOME: dir, KUBECONFIG: kubeconfig };
  const ready = writeFile(kubeconfig, kubeconfigYaml('capture', proxyUrl), { mode: 0o600 });
  return {
    async run(args, stdin) {
      await ready;
      return new Promise((resolve) => {
        const child = execFile(KUBECTL, [...base, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? 1 : 0, stdout, stderr }),
        );
        child.stdin!.end(stdin ?? '');
      });
    },
    stream(args) {
      const child = spawn(KUBECTL, [...base, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      return {
        waitFor: (re) =>
          waitFor(() => re.test(out), 20_000, `kubectl ${args.join(' ')} to print ${re}`).then(() => undefined),
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      };
    },
  };
}

const isDiscovery = (r: ProxyRecord) => r.resource === undefined;

function toCorpusRequest(r: ProxyRecord, id: string): CorpusRequest {
  const body = r.requestBody;
  const text = body?.toString('utf8');
  const binary = body !== undefined && (r.contentType?.includes('protobuf') ?? false);
  const docs = r.responseBody ? jsonDocuments(r.responseBody.toString('utf8')) : [];
  const binds =
    docs.length === 1 ? identities(docs[0]) : identities(docs.map((d) => (d as { object?: unknown }).object));
  const watchEvents =
    r.verb === 'watch' ? docs.filter((d) => (d as { type?: string }).type !== 'BOOKMARK').length : undefined;
  return {
    id,
    method: r.method,
    path: r.path,
    query: r.query,
    ...(r.contentType ? { contentType: r.contentType } : {}),
    ...(r.accept ? { accept: r.accept } : {}),
    ...(body && !binary ? { body: text } : {}),
    ...(body && binary ? { bodyBase64: body.toString('base64') } : {}),
    ...(watchEvents !== undefined ? { watchEvents } : {}),
    ...(Object.keys(binds).length ? { binds } : {}),
    capturedStatus: r.status,
  };
}

/** A case's records as corpus requests; a discovery request already in the corpus is not repeated. */
function caseFrom(name: string, source: string, recs: ProxyRecord[], seenDiscovery: Set<string>): CorpusCase {
  const kept = recs.filter((r) => {
    if (r.path.startsWith('/openapi')) return false;
    if (!isDiscovery(r)) return true;
    const key = `${r.method} ${r.path} ${r.accept}`;
    if (seenDiscovery.has(key)) return false;
    seenDiscovery.add(key);
    return true;
  });
  const slug = name
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase()
    .slice(0, 40);
  return { name, source, requests: kept.map((r, i) => toCorpusRequest(r, `${slug}#${i}`)) };
}

async function captureKubectl(seen: Set<string>): Promise<CorpusCase[]> {
  requireKubeBinary('kubectl');
  const cluster = await startLocalCluster({ bookmarkIntervalMs: 60_000 });
  const proxy = await startKubeProxy({ target: cluster.url, captureBodies: true });
  const dir = await mkdtemp(join(tmpdir(), 'fidelity-capture-'));
  try {
    const k = kubectlThrough(proxy.url, dir);
    const cases: CorpusCase[] = [];
    for (const c of KUBECTL_CASES) {
      const mark = proxy.mark();
      await c.run(k, proxy);
      // A stopped watch is recorded when its connection closes.
      await waitFor(
        () => proxy.records(mark).every((r) => r.durationMs > 0 || r.status > 0),
        10_000,
        'every request of the case to end',
      );
      const captured = caseFrom(c.name, 'kubectl', proxy.records(mark), seen);
      // A case whose every request an earlier case already made (discovery) adds nothing.
      if (captured.requests.length) cases.push(captured);
    }
    return cases;
  } finally {
    await proxy.stop();
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The product's reconcile of a new edge NodePool, set-up requests included so a fresh backend can replay it. */
async function captureProduct(seen: Set<string>): Promise<CorpusCase> {
  // The local API's answers are what the corpus replays against the real one.
  const world = await startReconcileWorld({ controlPlane: 'local' });
  const proxy = await startKubeProxy({ target: world.url, captureBodies: true });
  try {
    await registerCluster(world.table, { id: CLUSTER_ID, access: { kind: 'url', url: proxy.url } }, new Date());
    const send = async (method: string, path: string, body: unknown, contentType = 'application/json') => {
      const res = await fetch(proxy.url + path, {
        method,
        headers: { 'content-type': contentType },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
    };
    // The world's own set-up, again through the proxy (on the capture backend these are no-ops).
    for (const file of ['infra/crds/nodepool.yaml', 'infra/crds/poolspirit.yaml']) {
      for (const doc of parseAllDocuments(await readFile(repo + file, 'utf8'))) {
        const crd = doc.toJSON() as { metadata: { name: string } } | null;
        if (crd)
          await send(
            'PATCH',
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?fieldManager=test-setup&force=true`,
            crd,
            'application/apply-patch+yaml',
          );
      }
    }
    await send(
      'PATCH',
      `/api/v1/namespaces/${DEFAULT_NAMESPACE}?fieldManager=test-setup&force=true`,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEFAULT_NAMESPACE } },
      'application/apply-patch+yaml',
    );
    await send(
      'PATCH',
      '/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt?fieldManager=test-setup&force=true',
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'kube-root-ca.crt', namespace: 'kube-system' },
        data: { 'ca.crt': world.clusterCaPem },
      },
      'application/apply-patch+yaml',
    );
    await send('POST', '/apis/apps.openyurt.io/v1beta2/nodepools', {
      apiVersion: 'apps.openyurt.io/v1beta2',
      kind: 'NodePool',
      metadata: { name: 'edge-a' },
      spec: { type: 'Edge' },
    });
    const result = await world.invoke('edge-a', { via: 'notice' });
    if (result.result !== 'applied') throw new Error(`the reconcile did not apply: ${JSON.stringify(result)}`);
    // A second, no-op pass: the reads and applies a steady state makes.
    await world.invoke('edge-a', { via: 'request' });
    return caseFrom(
      'product: reconcile a new edge NodePool, then once more',
      'functions/reconcile handler',
      proxy.records(),
      seen,
    );
  } finally {
    await proxy.stop();
    await world.stop();
  }
}

const seen = new Set<string>();
const corpus: Corpus = {
  capturedWith:
    'kube-proxy in front of the local API (memory storage); kubectl v1.36.3; node test/e2e/fidelity/capture.ts',
  cases: [...(await captureKubectl(seen)), await captureProduct(seen)],
};
await mkdir(new URL('./fixtures/', import.meta.url), { recursive: true });
await writeFile(CORPUS_PATH, `${JSON.stringify(corpus, null, 1)}\n`);
console.log(
  `${corpus.cases.length} cases, ${corpus.cases.reduce((n, c) => n + c.requests.length, 0)} requests → ${fileURLToPath(CORPUS_PATH)}`,
);
