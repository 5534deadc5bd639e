/**
 * Server-side printers for built-in kinds: the columns and cells kube-apiserver's
 * pkg/printers/internalversion produces (always "wide", since the server sends every column and kubectl
 * hides priority > 0 unless `-o wide`). Objects here may not carry every defaulted field, so printers
 * apply kube's defaults where a missing value would otherwise print differently.
 */
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type {
  Container,
  ContainerStatus,
  Namespace,
  Node,
  NodeSystemInfo,
  Pod,
  PodSpec,
  PodStatus,
  Service,
  ServiceAccount,
  ServiceSpec,
} from 'kubernetes-types/core/v1.js';
import type { RoleBinding } from 'kubernetes-types/rbac/v1.js';
import type { ApiObject } from './api-object.ts';
import { labelSelectorFromMeta, labelSelectorToString, SelectorError } from './selectors.ts';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRowCondition {
  type: 'Completed';
  status: 'True';
  reason: string;
  message: string;
}

export interface BuiltinPrinter {
  columns: ColumnDefinition[];
  /** `obj` is a stored object of the printer's kind (its schema checked on write): each printer reads it as that kind. */
  cells(obj: ApiObject, now: number): unknown[];
  conditions?(obj: ApiObject): TableRowCondition[] | undefined;
}

export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

function col(name: string, type: string, description: string, priority = 0, format = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}
const nameCol = () => col('Name', 'string', NAME_DESCRIPTION, 0, 'name');
const ageCol = () => col('Age', 'string', CREATION_TIMESTAMP_DESCRIPTION);

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    return dy === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** kube's translateTimestampSince / ConvertToHumanReadableDateType. */
export function age(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}

/** RFC3339 in UTC without fractional seconds, as Go's time.RFC3339 prints it. */
function rfc3339(timestamp: unknown): string {
  if (typeof timestamp !== 'string') return '0001-01-01T00:00:00Z';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? timestamp : new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');
}

const count = (v: unknown) => (v && typeof v === 'object' ? Object.keys(v).length : 0);

/** labels.FormatLabels: sorted k=v pairs, `<none>` when empty. */
function formatLabels(m: Record<string, string> | undefined): string {
  const keys = Object.keys(m ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${m![k]}`).join(',') : '<none>';
}

function podCells(pod: Pod, now: number): unknown[] {
  const spec: Partial<PodSpec> = pod.spec ?? {};
  const status: PodStatus = pod.status ?? {};
  const containers = spec.containers ?? [];
  const initContainers = spec.initContainers ?? [];
  let restarts = 0;
  let readyContainers = 0;
  let lastRestart = 0;
  let reason: string = status.reason || status.phase || '';
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const noteRestart = (cs: ContainerStatus) => {
    const finished = cs.lastState?.terminated?.finishedAt;
    if (finished) lastRestart = Math.max(lastRestart, Date.parse(finished) || 0);
  };

  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    if (cs === undefined) continue; // i < length (and the index loop also walks a non-array's length)
    restarts += cs.restartCount ?? 0;
    noteRestart(cs);
    const sidecar = initContainers.find((c) => c.name === cs.name)?.restartPolicy === 'Always';
    const term = cs.state?.terminated;
    if (term && term.exitCode === 0) continue;
    if (sidecar && cs.started) {
      if (cs.ready) readyContainers++;
      continue;
    }
    if (term) {
      reason = term.reason
        ? `Init:${term.reason}`
        : term.signal
          ? `Init:Signal:${term.signal}`
          : `Init:ExitCode:${term.exitCode ?? 0}`;
    } else if (cs.state?.waiting?.reason && cs.state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${cs.state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${initContainers.length}`;
    }
    initializing = true;
    break;
  }
  const initializedTrue = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initializedTrue) {
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      if (cs === undefined) continue; // i < length
      restarts += cs.restartCount ?? 0;
      noteRestart(cs);
      const st = cs.state ?? {};
      if (st.waiting?.reason) reason = st.waiting.reason;
      else if (st.terminated?.reason) reason = st.terminated.reason;
      else if (st.terminated)
        reason = st.terminated.signal ? `Signal:${st.terminated.signal}` : `ExitCode:${st.terminated.exitCode ?? 0}`;
      else if (cs.ready && st.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
        ? 'Running'
        : 'NotReady';
    }
  }
  const deleting = !!pod.metadata?.deletionTimestamp;
  if (deleting && status.reason === 'NodeLost') reason = 'Unknown';
  else if (deleting && status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating';

  const restartsCell =
    restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  const gates = spec.readinessGates ?? [];
  let readinessGates = '<none>';
  if (gates.length) {
    const trueConds = new Set((status.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type));
    readinessGates = `${gates.filter((g) => trueConds.has(g.conditionType)).length}/${gates.length}`;
  }
  return [
    pod.metadata?.name,
    `${readyContainers}/${containers.length}`,
    reason,
    restartsCell,
    age(pod.metadata?.creationTimestamp, now),
    status.podIPs?.[0]?.ip || status.podIP || '<none>',
    spec.nodeName || '<none>',
    status.nominatedNodeName || '<none>',
    readinessGates,
  ];
}

function serviceExternalIp(svc: Service): string {
  const spec: ServiceSpec = svc.spec ?? {};
  const externalIPs = spec.externalIPs ?? [];
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname).filter(Boolean);
      const all = [...lb, ...externalIPs];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

function containerCells(containers: Container[] = []): [string, string] {
  return [containers.map((c) => c.name).join(','), containers.map((c) => c.image).join(',')];
}

function selectorString(sel: unknown): string {
  try {
    const parsed = labelSelectorFromMeta(sel as never);
    return parsed ? labelSelectorToString(parsed) : '';
  } catch (err) {
    if (err instanceof SelectorError) return '<invalid>';
    throw err;
  }
}

const completedConditions: Record<string, TableRowCondition[]> = {
  Succeeded: [
    { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
  ],
  Failed: [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }],
};

const createdAtPrinter: BuiltinPrinter = {
  columns: [nameCol(), col('Created At', 'date', CREATION_TIMESTAMP_DESCRIPTION)],
  cells: (o) => [o.metadata?.name, rfc3339(o.metadata?.creationTimestamp)],
};

/** Keyed by `group/resource` (core group: `/pods`). */
export const builtinPrinters: Record<string, BuiltinPrinter> = {
  '/pods': {
    columns: [
      nameCol(),
      col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'string', 'The aggregate status of the containers in this pod.'),
      col(
        'Restarts',
        'string',
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      ),
      ageCol(),
      col(
        'IP',
        'string',
        'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
        1,
      ),
      col(
        'Node',
        'string',
        'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
        1,
      ),
      col(
        'Nominated Node',
        'string',
        'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
        1,
      ),
      col(
        'Readiness Gates',
        'string',
        'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
        1,
      ),
    ],
    cells: (o, now) => podCells(o as Pod, now),
    conditions: (o) => completedConditions[(o as Pod).status?.phase as string],
  },
  'apps/deployments': {
    columns: [
      nameCol(),
      col('Ready', 'string', 'Number of the pod with ready state'),
      col(
        'Up-to-date',
        'string',
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      ),
      col(
        'Available',
        'string',
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      ),
      ageCol(),
      col('Containers', 'string', 'Names of each container in the template.', 1),
      col('Images', 'string', 'Images referenced by each container in the template.', 1),
      col(
        'Selector',
        'string',
        'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
        1,
      ),
    ],
    cells: (obj, now) => {
      const o = obj as Deployment;
      return [
        o.metadata?.name,
        `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
        o.status?.updatedReplicas ?? 0,
        o.status?.availableReplicas ?? 0,
        age(o.metadata?.creationTimestamp, now),
        ...containerCells(o.spec?.template?.spec?.containers),
        selectorString(o.spec?.selector),
      ];
    },
  },
  '/nodes': {
    columns: [
      nameCol(),
      col('Status', 'string', 'The status of the node'),
      col('Roles', 'string', 'The roles of the node'),
      ageCol(),
      col('Version', 'string', 'Kubelet Version reported by the node.'),
      col('Internal-IP', 'string', 'List of addresses reachable to the node.', 1),
      col('External-IP', 'string', 'List of addresses reachable to the node.', 1),
      col(
        'OS-Image',
        'string',
        'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
        1,
      ),
      col(
        'Kernel-Version',
        'string',
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        1,
      ),
      col(
        'Container-Runtime',
        'string',
        'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
        1,
      ),
    ],
    cells: (obj, now) => {
      const o = obj as Node;
      const ready = (o.status?.conditions ?? []).find((c) => c.type === 'Ready');
      const status = ready ? [ready.status === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
      if (o.spec?.unschedulable) status.push('SchedulingDisabled');
      const roles = new Set<string>();
      for (const [k, v] of Object.entries<string>(o.metadata?.labels ?? {})) {
        if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length)
          roles.add(k.slice('node-role.kubernetes.io/'.length));
        else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
      }
      const addr = (type: string) => (o.status?.addresses ?? []).find((a) => a.type === type)?.address ?? '<none>';
      const info: Partial<NodeSystemInfo> = o.status?.nodeInfo ?? {};
      return [
        o.metadata?.name,
        status.join(','),
        [...roles].sort().join(',') || '<none>',
        age(o.metadata?.creationTimestamp, now),
        info.kubeletVersion ?? '',
        addr('InternalIP'),
        addr('ExternalIP'),
        info.osImage || '<unknown>',
        info.kernelVersion || '<unknown>',
        info.containerRuntimeVersion || '<unknown>',
      ];
    },
  },
  '/namespaces': {
    columns: [nameCol(), col('Status', 'string', 'The status of the namespace'), ageCol()],
    cells: (o, now) => [
      o.metadata?.name,
      (o as Namespace).status?.phase ?? '',
      age(o.metadata?.creationTimestamp, now),
    ],
  },
  '/services': {
    columns: [
      nameCol(),
      col('Type', 'string', 'type determines how the Service is exposed.'),
      col('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
      col(
        'External-IP',
        'string',
        'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
      ),
      col('Port(s)', 'string', 'The list of ports that are exposed by this service.'),
      ageCol(),
      col('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.', 1),
    ],
    cells: (obj, now) => {
      const o = obj as Service;
      const spec: ServiceSpec = o.spec ?? {};
      const ports = (spec.ports ?? [])
        .map((p) =>
          // A missing nodePort is not > 0, as 0 is not.
          (p.nodePort ?? 0) > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`,
        )
        .join(',');
      return [
        o.metadata?.name,
        spec.type ?? 'ClusterIP',
        spec.clusterIPs?.[0] ?? spec.clusterIP ?? '<none>',
        serviceExternalIp(o),
        ports || '<none>',
        age(o.metadata?.creationTimestamp, now),
        formatLabels(spec.selector),
      ];
    },
  },
  'coordination.k8s.io/leases': {
    columns: [
      nameCol(),
      col('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.'),
      ageCol(),
    ],
    cells: (o, now) => [
      o.metadata?.name,
      (o as Lease).spec?.holderIdentity ?? '',
      age(o.metadata?.creationTimestamp, now),
    ],
  },
  '/configmaps': {
    columns: [
      nameCol(),
      col(
        'Data',
        'string',
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
      ),
      ageCol(),
    ],
    cells: (o, now) => [o.metadata?.name, count(o.data) + count(o.binaryData), age(o.metadata?.creationTimestamp, now)],
  },
  '/secrets': {
    columns: [
      nameCol(),
      col('Type', 'string', 'Used to facilitate programmatic handling of secret data.'),
      col('Data', 'integer', 'Data contains the secret data.'),
      ageCol(),
    ],
    cells: (o, now) => [o.metadata?.name, o.type ?? 'Opaque', count(o.data), age(o.metadata?.creationTimestamp, now)],
  },
  '/serviceaccounts': {
    columns: [
      nameCol(),
      col(
        'Secrets',
        'integer',
        'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
      ),
      ageCol(),
    ],
    cells: (o, now) => [
      o.metadata?.name,
      ((o as ServiceAccount).secrets ?? []).length,
      age(o.metadata?.creationTimestamp, now),
    ],
  },
  'rbac.authorization.k8s.io/roles': createdAtPrinter,
  'rbac.authorization.k8s.io/clusterroles': createdAtPrinter,
  'apiextensions.k8s.io/customresourcedefinitions': createdAtPrinter,
  'rbac.authorization.k8s.io/rolebindings': bindingPrinter(),
  'rbac.authorization.k8s.io/clusterrolebindings': bindingPrinter(),
};

function bindingPrinter(): BuiltinPrinter {
  const subjects = (o: Partial<RoleBinding>, kind: string) =>
    (o.subjects ?? [])
      .filter((s) => s.kind === kind)
      .map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
      .join(', ');
  return {
    columns: [
      nameCol(),
      col('Role', 'string', 'RoleRef references the role'),
      ageCol(),
      col('Users', 'string', 'Users in the roleBinding', 1),
      col('Groups', 'string', 'Groups in the roleBinding', 1),
      col('ServiceAccounts', 'string', 'ServiceAccounts in the roleBinding', 1),
    ],
    cells: (obj, now) => {
      const o = obj as Partial<RoleBinding>; // or a ClusterRoleBinding: the same fields
      return [
        o.metadata?.name,
        `${o.roleRef?.kind ?? ''}/${o.roleRef?.name ?? ''}`,
        age(o.metadata?.creationTimestamp, now),
        subjects(o, 'User'),
        subjects(o, 'Group'),
        subjects(o, 'ServiceAccount'),
      ];
    },
  };
}

/** Kinds without a dedicated printer here: Name and Age. */
export const genericPrinter: BuiltinPrinter = {
  columns: [nameCol(), ageCol()],
  cells: (o, now) => [o.metadata?.name, age(o.metadata?.creationTimestamp, now)],
};
