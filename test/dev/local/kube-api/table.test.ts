import { describe, expect, it } from 'vitest';
import { evaluateJsonPath } from '../../../../dev/local/kube-api/jsonpath.ts';
import { toTable } from '../../../../dev/local/kube-api/table.ts';
import { humanDuration } from '../../../../dev/local/kube-api/table-printers.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
type Table = {
  kind: string;
  apiVersion: string;
  metadata: Record<string, unknown>;
  columnDefinitions: Array<Record<string, unknown>>;
  rows: Array<{ cells: unknown[]; object: any; conditions?: unknown[] }>;
};
const table = (...args: Parameters<typeof toTable>) => toTable(...args) as Table;

const nodePools = {
  group: 'apps.openyurt.io',
  version: 'v1beta1',
  kind: 'NodePool',
  resource: 'nodepools',
  namespaced: false,
  custom: true,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'The type of nodepool' },
    { name: 'ReadyNodes', type: 'integer', jsonPath: '.status.readyNodeNum' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

describe('humanDuration (kube duration.HumanDuration)', () => {
  it.each([
    [-5, '<invalid>'],
    [-1, '0s'],
    [0, '0s'],
    [119, '119s'],
    [120, '2m'],
    [125, '2m5s'],
    [600, '10m'],
    [179 * 60, '179m'],
    [3 * 3600, '3h'],
    [3 * 3600 + 120, '3h2m'],
    [47 * 3600, '47h'],
    [50 * 3600, '2d2h'],
    [10 * 86400, '10d'],
    [3 * 365 * 86400 + 86400, '3y1d'],
    [9 * 365 * 86400, '9y'],
  ])('%i s -> %s', (s, text) => {
    expect(humanDuration(s * 1000)).toBe(text);
  });
});

describe('jsonpath subset', () => {
  const obj = {
    a: {
      'b.c': 1,
      list: [
        { t: 'x', v: 1 },
        { t: 'y', v: 2 },
      ],
    },
  };
  it('evaluates fields, quoted keys, indexes, wildcards and filters', () => {
    expect(evaluateJsonPath('.a.list[1].v', obj)).toEqual([2]);
    expect(evaluateJsonPath(".a['b.c']", obj)).toEqual([1]);
    expect(evaluateJsonPath('.a.list[*].t', obj)).toEqual(['x', 'y']);
    expect(evaluateJsonPath('.a.list[?(@.t=="y")].v', obj)).toEqual([2]);
    expect(evaluateJsonPath(".a.list[?(@.t != 'y')].v", obj)).toEqual([1]);
    expect(evaluateJsonPath('{.a.list[-1].t}', obj)).toEqual(['y']);
    expect(evaluateJsonPath('.a.missing.deeper', obj)).toEqual([]);
  });
});

describe('toTable for custom resources', () => {
  const pool = {
    apiVersion: 'apps.openyurt.io/v1beta1',
    kind: 'NodePool',
    metadata: { name: 'hangzhou', creationTimestamp: ago(90), uid: 'u1', resourceVersion: '7' },
    spec: { type: 'Edge', hosts: ['a', 'b'] },
    status: {
      readyNodeNum: 3,
      conditions: [
        { type: 'Synced', status: 'True' },
        { type: 'Ready', status: 'False' },
      ],
    },
  };

  it('uses Name plus the CRD columns with typed cells, like apiextensions-apiserver', () => {
    const t = table(nodePools, [pool], { resourceVersion: '9', continue: 'abc', now: NOW });
    expect(t.kind).toBe('Table');
    expect(t.apiVersion).toBe('meta.k8s.io/v1');
    expect(t.metadata).toEqual({ resourceVersion: '9', continue: 'abc' });
    expect(t.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ['Name', 'string', 'name', 0],
      ['Type', 'string', '', 0],
      ['ReadyNodes', 'integer', '', 0],
      ['Ready', 'string', '', 0],
      ['Hosts', 'string', '', 1],
      ['Age', 'date', '', 0],
    ]);
    expect(t.columnDefinitions[1].description).toBe('The type of nodepool');
    expect(t.columnDefinitions[2].description).toBe(
      'Custom resource definition column (in JSONPath format): .status.readyNodeNum',
    );
    expect(t.rows[0].cells).toEqual(['hangzhou', 'Edge', 3, 'False', '["a","b"]', '90s']);
  });

  it('gives null cells for missing or mistyped values', () => {
    const bare = {
      metadata: { name: 'x', creationTimestamp: 'yesterday' },
      spec: {},
      status: { readyNodeNum: 'three' },
    };
    expect(table(nodePools, [bare], { resourceVersion: '1', now: NOW }).rows[0].cells).toEqual([
      'x',
      null,
      null,
      null,
      null,
      '<invalid>',
    ]);
  });

  it('serves a default Age column only when the CRD declares none', () => {
    const t = table({ ...nodePools, printerColumns: [] }, [pool], { resourceVersion: '1', now: NOW });
    expect(t.columnDefinitions.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Age', 'date'],
    ]);
    expect(t.rows[0].cells).toEqual(['hangzhou', '90s']);
  });

  it('embeds PartialObjectMetadata by default, the object or nothing on request', () => {
    expect(table(nodePools, [pool], { resourceVersion: '1' }).rows[0].object).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: pool.metadata,
    });
    expect(table(nodePools, [pool], { resourceVersion: '1', includeObject: 'Object' }).rows[0].object).toBe(pool);
    expect(table(nodePools, [pool], { resourceVersion: '1', includeObject: 'None' }).rows[0].object).toBeNull();
    expect(() => table(nodePools, [pool], { resourceVersion: '1', includeObject: 'All' as never })).toThrow(
      'unrecognized includeObject value: "All"',
    );
  });
});

describe('toTable for built-in kinds', () => {
  const core = (resource: string, kind: string, namespaced = true) => ({
    group: '',
    version: 'v1',
    kind,
    resource,
    namespaced,
  });
  const names = (t: Table) => t.columnDefinitions.map((c) => c.name);

  it('prints pods like kubectl get pods -o wide', () => {
    const pod = {
      metadata: { name: 'web-1', creationTimestamp: ago(300) },
      spec: { nodeName: 'edge-1', containers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Running',
        podIPs: [{ ip: '10.1.0.5' }],
        containerStatuses: [
          {
            name: 'a',
            ready: true,
            restartCount: 2,
            state: { running: {} },
            lastState: { terminated: { finishedAt: ago(60) } },
          },
          { name: 'b', ready: false, restartCount: 0, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      },
    };
    const t = table(core('pods', 'Pod'), [pod], { resourceVersion: '1', now: NOW });
    expect(names(t)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP',
      'Node',
      'Nominated Node',
      'Readiness Gates',
    ]);
    expect(t.columnDefinitions.filter((c) => c.priority === 1).map((c) => c.name)).toEqual([
      'IP',
      'Node',
      'Nominated Node',
      'Readiness Gates',
    ]);
    expect(t.rows[0].cells).toEqual([
      'web-1',
      '1/2',
      'CrashLoopBackOff',
      '2 (60s ago)',
      '5m',
      '10.1.0.5',
      'edge-1',
      '<none>',
      '<none>',
    ]);
  });

  it('marks terminating, pending and completed pods like kube', () => {
    const base = { metadata: { name: 'p', creationTimestamp: ago(1) }, spec: { containers: [{ name: 'a' }] } };
    const cells = (pod: object) => table(core('pods', 'Pod'), [pod], { resourceVersion: '1', now: NOW }).rows[0];
    expect(cells({ ...base, status: { phase: 'Pending' } }).cells.slice(1, 4)).toEqual(['0/1', 'Pending', '0']);
    expect(
      cells({ ...base, metadata: { ...base.metadata, deletionTimestamp: ago(0) }, status: { phase: 'Running' } })
        .cells[2],
    ).toBe('Terminating');
    const done = cells({
      ...base,
      status: {
        phase: 'Succeeded',
        containerStatuses: [{ name: 'a', state: { terminated: { reason: 'Completed', exitCode: 0 } } }],
      },
    });
    expect(done.cells[2]).toBe('Completed');
    expect(done.conditions).toEqual([
      { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
    ]);
    expect(
      cells({
        ...base,
        spec: { ...base.spec, initContainers: [{ name: 'i' }] },
        status: {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'i', state: { waiting: { reason: 'PodInitializing' } } }],
        },
      }).cells[2],
    ).toBe('Init:0/1');
  });

  it('prints deployments, nodes, namespaces, services, leases, configmaps and secrets', () => {
    const row = (res: ReturnType<typeof core>, obj: object) => {
      const t = table(res, [obj], { resourceVersion: '1', now: NOW });
      return [names(t), t.rows[0].cells];
    };
    const meta = { name: 'x', creationTimestamp: ago(30) };
    expect(
      row(
        { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
        {
          metadata: meta,
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: 'x' } },
            template: { spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
          },
          status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
        },
      ),
    ).toEqual([
      ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector'],
      ['x', '2/3', 3, 2, '30s', 'c', 'nginx:1', 'app=x'],
    ]);
    expect(
      row(core('nodes', 'Node', false), {
        metadata: { ...meta, labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'edge' } },
        spec: { unschedulable: true },
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          nodeInfo: { kubeletVersion: 'v1.32.0' },
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
        },
      }),
    ).toEqual([
      [
        'Name',
        'Status',
        'Roles',
        'Age',
        'Version',
        'Internal-IP',
        'External-IP',
        'OS-Image',
        'Kernel-Version',
        'Container-Runtime',
      ],
      [
        'x',
        'Ready,SchedulingDisabled',
        'control-plane,edge',
        '30s',
        'v1.32.0',
        '10.0.0.2',
        '<none>',
        '<unknown>',
        '<unknown>',
        '<unknown>',
      ],
    ]);
    expect(row(core('namespaces', 'Namespace', false), { metadata: meta, status: { phase: 'Active' } })).toEqual([
      ['Name', 'Status', 'Age'],
      ['x', 'Active', '30s'],
    ]);
    expect(
      row(core('services', 'Service'), {
        metadata: meta,
        spec: {
          clusterIP: '10.96.0.10',
          ports: [
            { port: 53, protocol: 'UDP' },
            { port: 80, nodePort: 30080 },
          ],
          selector: { b: '2', a: '1' },
        },
      }),
    ).toEqual([
      ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector'],
      ['x', 'ClusterIP', '10.96.0.10', '<none>', '53/UDP,80:30080/TCP', '30s', 'a=1,b=2'],
    ]);
    expect(
      row(
        { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true },
        { metadata: meta, spec: { holderIdentity: 'pod-a' } },
      ),
    ).toEqual([
      ['Name', 'Holder', 'Age'],
      ['x', 'pod-a', '30s'],
    ]);
    expect(
      row(core('configmaps', 'ConfigMap'), { metadata: meta, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }),
    ).toEqual([
      ['Name', 'Data', 'Age'],
      ['x', 3, '30s'],
    ]);
    expect(
      row(core('secrets', 'Secret'), {
        metadata: meta,
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': '', 'tls.key': '' },
      }),
    ).toEqual([
      ['Name', 'Type', 'Data', 'Age'],
      ['x', 'kubernetes.io/tls', 2, '30s'],
    ]);
    expect(row(core('events', 'Event'), { metadata: meta })).toEqual([
      ['Name', 'Age'],
      ['x', '30s'],
    ]);
  });
});
