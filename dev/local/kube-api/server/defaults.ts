/**
 * kube-apiserver's defaulting for the built-in kinds (SetDefaults_* of k8s.io/api, plus what the pod and
 * service strategies fill in on create), applied on every write the way decoding applies it. Only the
 * fields clients read back commonly are covered: pod/template spec and container defaults, Deployment
 * strategy and limits, Service type/ports/cluster IP, Secret type, RBAC subject groups.
 */
import { randomInt } from 'node:crypto';
import type { ResourceInfo } from '../registry.ts';
import { type ApiObject, isPlainObject, type JsonObject } from './objects.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function setDefault(obj: JsonObject, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = value;
}

function imagePullPolicy(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  const [withoutDigest = ''] = image.split('@');
  const lastSlash = withoutDigest.lastIndexOf('/');
  const tagAt = withoutDigest.indexOf(':', lastSlash + 1);
  if (image.includes('@')) return 'IfNotPresent';
  const tag = tagAt < 0 ? '' : withoutDigest.slice(tagAt + 1);
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: unknown): void {
  if (!isPlainObject(p)) return;
  setDefault(p, 'timeoutSeconds', 1);
  setDefault(p, 'periodSeconds', 10);
  setDefault(p, 'successThreshold', 1);
  setDefault(p, 'failureThreshold', 3);
  if (isPlainObject(p.httpGet)) {
    setDefault(p.httpGet, 'path', '/');
    setDefault(p.httpGet, 'scheme', 'HTTP');
  }
}

function defaultContainer(c: JsonObject): void {
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[probe]);
  if (Array.isArray(c.env)) {
    for (const e of c.env)
      if (isPlainObject(e) && isPlainObject(e.valueFrom) && isPlainObject(e.valueFrom.fieldRef))
        setDefault(e.valueFrom.fieldRef, 'apiVersion', 'v1');
  }
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'imagePullPolicy', imagePullPolicy(c.image));
  setDefault(c, 'resources', {});
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isPlainObject(p)) setDefault(p, 'protocol', 'TCP');
}

export function defaultPodSpec(spec: unknown): void {
  if (!isPlainObject(spec)) return;
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'enableServiceLinks', true);
  // The deprecated alias and the field are kept equal, whichever was given.
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName)
    setDefault(spec, 'serviceAccount', spec.serviceAccountName);
  else if (typeof spec.serviceAccount === 'string' && spec.serviceAccount)
    setDefault(spec, 'serviceAccountName', spec.serviceAccount);
  for (const list of ['initContainers', 'containers']) {
    if (Array.isArray(spec[list])) for (const c of spec[list]) if (isPlainObject(c)) defaultContainer(c);
  }
}

/** QoS class as kube computes it for a new pod's status. */
function qosClass(spec: JsonObject): string {
  // Spread as before: a container list that is not iterable throws (the casts only name what is assumed).
  const containers = [...((spec.initContainers ?? []) as unknown[]), ...((spec.containers ?? []) as unknown[])].filter(
    isPlainObject,
  );
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const resources = c.resources as JsonObject | null | undefined;
    const req = (resources?.requests ?? {}) as JsonObject;
    const lim = (resources?.limits ?? {}) as JsonObject;
    if (Object.keys(req).length || Object.keys(lim).length) anySet = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined) guaranteed = false;
      else if (req[r] !== undefined && String(req[r]) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * Hands out Service cluster IPs from 10.96.0.0/12 in order, after the ones already taken (kube picks at
 * random; ordered addresses are easier to read and stay inside 10.96.x for a long while).
 */
export class ClusterIpAllocator {
  private readonly used = new Set<number>();
  private next = 11; // 10.96.0.1 is the kubernetes Service, 10.96.0.10 conventionally cluster DNS

  reserve(ip: unknown): void {
    const n = ipOffset(ip);
    if (n !== undefined) this.used.add(n);
  }

  allocate(): string {
    for (let tries = 0; tries < 1 << 20; tries++) {
      const n = this.next;
      this.next = this.next + 1 >= 1 << 20 ? 2 : this.next + 1;
      if (!this.used.has(n)) {
        this.used.add(n);
        return `10.${96 + (n >> 16)}.${(n >> 8) & 0xff}.${n & 0xff}`;
      }
    }
    throw new Error('the service cluster IP range 10.96.0.0/12 is full');
  }
}

function ipOffset(ip: unknown): number | undefined {
  const m = typeof ip === 'string' ? /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(ip) : null;
  if (!m) return undefined;
  const [a, b, c] = [Number(m[1]) - 96, Number(m[2]), Number(m[3])];
  if (a < 0 || a > 15 || b > 255 || c > 255) return undefined;
  return (a << 16) | (b << 8) | c;
}

function defaultService(obj: ApiObject, old: ApiObject | undefined, ips: ClusterIpAllocator | undefined): void {
  obj.spec ??= {};
  const spec = obj.spec;
  if (!isPlainObject(spec)) return;
  setDefault(spec, 'type', 'ClusterIP');
  setDefault(spec, 'sessionAffinity', 'None');
  if (spec.type === 'ExternalName') return;
  const oldSpec = (old?.spec ?? {}) as JsonObject;
  if (!spec.clusterIP && oldSpec.clusterIP) {
    spec.clusterIP = oldSpec.clusterIP;
    spec.clusterIPs = oldSpec.clusterIPs;
  }
  if (!spec.clusterIP) {
    if (!ips) throw new Error('no cluster IP allocator for a new Service');
    spec.clusterIP = ips.allocate();
  } else if (!old) {
    ips?.reserve(spec.clusterIP);
  }
  if (!Array.isArray(spec.clusterIPs) || !spec.clusterIPs.length) spec.clusterIPs = [spec.clusterIP];
  if (spec.clusterIP !== 'None') {
    setDefault(spec, 'ipFamilies', ['IPv4']);
    setDefault(spec, 'ipFamilyPolicy', 'SingleStack');
  }
  setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  const needsNodePort = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
  if (needsNodePort) setDefault(spec, 'externalTrafficPolicy', 'Cluster');
  if (Array.isArray(spec.ports)) {
    for (const p of spec.ports) {
      if (!isPlainObject(p)) continue;
      setDefault(p, 'protocol', 'TCP');
      setDefault(p, 'targetPort', p.port);
      if (needsNodePort && !p.nodePort) {
        const prev = ((oldSpec.ports ?? []) as JsonObject[]).find(
          (o) => o.port === p.port && (o.protocol ?? 'TCP') === p.protocol,
        );
        p.nodePort = prev?.nodePort ?? randomInt(30000, 32768);
      }
    }
  }
  if (obj.status === undefined) obj.status = { loadBalancer: {} };
}

/** Applies defaults in place; `old` is the stored object on updates (allocated values carry over). */
export function applyBuiltinDefaults(
  info: ResourceInfo,
  obj: ApiObject,
  old: ApiObject | undefined,
  ips?: ClusterIpAllocator,
): void {
  if (info.custom) return;
  const gr = `${info.group}/${info.resource}`;
  switch (gr) {
    case '/pods':
      defaultPodSpec(obj.spec);
      if (!old && isPlainObject(obj.spec)) obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec) };
      break;
    case '/services':
      defaultService(obj, old, ips);
      break;
    case '/secrets':
      setDefault(obj, 'type', 'Opaque');
      break;
    case 'apps/deployments': {
      const spec = obj.spec;
      if (!isPlainObject(spec)) break;
      setDefault(spec, 'replicas', 1);
      setDefault(spec, 'revisionHistoryLimit', 10);
      setDefault(spec, 'progressDeadlineSeconds', 600);
      const strategy = isPlainObject(spec.strategy) ? spec.strategy : {};
      spec.strategy = strategy;
      setDefault(strategy, 'type', 'RollingUpdate');
      if (strategy.type === 'RollingUpdate') {
        const ru = isPlainObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
        strategy.rollingUpdate = ru;
        setDefault(ru, 'maxUnavailable', '25%');
        setDefault(ru, 'maxSurge', '25%');
      }
      defaultPodSpec((spec.template as JsonObject | null | undefined)?.spec);
      if (!old && obj.status === undefined) obj.status = {};
      break;
    }
    case `${RBAC_GROUP}/rolebindings`:
    case `${RBAC_GROUP}/clusterrolebindings`:
      if (Array.isArray(obj.subjects)) {
        for (const s of obj.subjects) {
          if (!isPlainObject(s)) continue;
          if (s.kind === 'User' || s.kind === 'Group') setDefault(s, 'apiGroup', RBAC_GROUP);
        }
      }
      break;
    default:
  }
}
