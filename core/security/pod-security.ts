/**
 * The Kubernetes Pod Security Standards (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
 * as a pure check over a pod or a workload's pod template, so tests can hold rendered objects to the
 * `restricted` profile without a cluster (the local API has no PodSecurity admission). Each violation names
 * the check as the standard does and the field path that breaks it, e.g.
 * `spec.template.spec.containers[1].securityContext.capabilities.drop`.
 *
 * Covers the checks of the current standard: baseline (host process, host namespaces, privileged,
 * capabilities, hostPath volumes, host ports, host probes / lifecycle hooks, AppArmor, SELinux, /proc mount,
 * seccomp, sysctls) and restricted on top (volume types, privilege escalation, running as non-root, non-root
 * user, seccomp, capabilities). As in the standard, pods with `spec.os.name: windows` are exempt from the
 * Linux-only restricted checks (privilege escalation, seccomp, capabilities). Not modelled: the relaxations
 * newer versions grant pods in a user namespace (`hostUsers: false`), which only ever allow more.
 */

export type PodSecurityLevel = 'baseline' | 'restricted';

export interface PodSecurityViolation {
  /** The check's name in the standard, e.g. "Host Namespaces". */
  check: string;
  level: PodSecurityLevel;
  /** Field path from the object's root. */
  path: string;
  message: string;
}

type Obj = Record<string, unknown>;

const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const RESTRICTED_ADDABLE_CAPABILITIES = new Set(['NET_BIND_SERVICE']);
const SAFE_SYSCTLS: ReadonlySet<unknown> = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);
const SELINUX_TYPES: ReadonlySet<unknown> = new Set([
  '',
  'container_t',
  'container_init_t',
  'container_kvm_t',
  'container_engine_t',
]);
const RESTRICTED_VOLUME_SOURCES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);
const CONFINED_PROFILE_TYPES: ReadonlySet<unknown> = new Set(['RuntimeDefault', 'Localhost']);
const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;
const PROBE_FIELDS = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/** Where the pod template sits in each workload kind. */
const TEMPLATE_PATHS: Record<string, string[]> = {
  Pod: [],
  PodTemplate: ['template'],
  Deployment: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

export interface PodTemplate {
  /** Path of the template from the object's root ('' for a Pod). */
  prefix: string;
  metadata: Obj;
  spec: Obj;
}

/** The pod template of a Pod or workload; a clear error for anything else. */
export function podTemplateOf(obj: unknown): PodTemplate {
  if (!isObj(obj)) throw new TypeError('expected a Kubernetes object (a Pod or a workload with a pod template)');
  const kind = obj.kind;
  // An own property only: `kind in TEMPLATE_PATHS` also admitted 'toString' or 'constructor' (inherited), which
  // then failed as 'path is not iterable' instead of naming the field.
  const path = typeof kind === 'string' && Object.hasOwn(TEMPLATE_PATHS, kind) ? TEMPLATE_PATHS[kind] : undefined;
  if (!path) {
    throw new TypeError(`kind: expected one of ${Object.keys(TEMPLATE_PATHS).join(', ')}, got ${JSON.stringify(kind)}`);
  }
  let template: unknown = obj;
  for (const key of path) template = isObj(template) ? template[key] : undefined;
  const prefix = path.join('.');
  if (!isObj(template)) throw new TypeError(`${prefix}: expected the pod template of the ${kind}`);
  const spec = template.spec;
  const specPath = prefix ? `${prefix}.spec` : 'spec';
  if (!isObj(spec)) throw new TypeError(`${specPath}: expected a pod spec`);
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) {
    throw new TypeError(`${specPath}.containers: expected at least one container`);
  }
  return { prefix, metadata: isObj(template.metadata) ? template.metadata : {}, spec };
}

/**
 * Violations of the given profile (restricted by default, which includes baseline), in field order.
 * An empty list means the pod would be admitted by PodSecurity at that level.
 */
export function podSecurityViolations(obj: unknown, level: PodSecurityLevel = 'restricted'): PodSecurityViolation[] {
  const { prefix, metadata, spec } = podTemplateOf(obj);
  const specPath = prefix ? `${prefix}.spec` : 'spec';
  const metaPath = prefix ? `${prefix}.metadata` : 'metadata';
  const out: PodSecurityViolation[] = [];
  const add = (check: string, lvl: PodSecurityLevel, path: string, message: string) =>
    out.push({ check, level: lvl, path, message });
  const restricted = level === 'restricted';
  const linux = at(spec, 'os', 'name') !== 'windows';
  const podSc = objAt(spec, 'securityContext');
  const podScPath = `${specPath}.securityContext`;
  const containers = CONTAINER_LISTS.flatMap((list) =>
    listAt(spec, list).map((c, i) => ({
      c: isObj(c) ? c : {},
      path: `${specPath}.${list}[${i}]`,
      name: String(at(c, 'name') ?? `#${i}`),
    })),
  );

  // --- baseline ---
  if (at(podSc, 'windowsOptions', 'hostProcess') === true)
    add('HostProcess', 'baseline', `${podScPath}.windowsOptions.hostProcess`, 'host process pods are not allowed');
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[field] === true)
      add('Host Namespaces', 'baseline', `${specPath}.${field}`, `${field} must be unset or false`);
  }
  listAt(spec, 'volumes').forEach((v, i) => {
    const path = `${specPath}.volumes[${i}]`;
    const name = at(v, 'name');
    if (at(v, 'hostPath') !== undefined)
      add('HostPath Volumes', 'baseline', `${path}.hostPath`, `volume ${name} must not be a hostPath`);
    else if (restricted) {
      const sources = Object.keys(isObj(v) ? v : {}).filter((k) => k !== 'name');
      for (const s of sources) {
        if (!RESTRICTED_VOLUME_SOURCES.has(s))
          add(
            'Volume Types',
            'restricted',
            `${path}.${s}`,
            `volume ${name} is of type ${s}; allowed: ${[...RESTRICTED_VOLUME_SOURCES].join(', ')}`,
          );
      }
    }
  });
  checkProfile(at(podSc, 'appArmorProfile'), `${podScPath}.appArmorProfile.type`, 'AppArmor', add);
  for (const [key, value] of Object.entries(objAt(metadata, 'annotations'))) {
    if (!key.startsWith(APPARMOR_ANNOTATION_PREFIX)) continue;
    if (value !== 'runtime/default' && !(typeof value === 'string' && value.startsWith('localhost/'))) {
      add(
        'AppArmor',
        'baseline',
        `${metaPath}.annotations[${key}]`,
        `AppArmor profile ${JSON.stringify(value)} is not allowed; use runtime/default or localhost/*`,
      );
    }
  }
  checkSeLinux(at(podSc, 'seLinuxOptions'), `${podScPath}.seLinuxOptions`, add);
  checkSeccompNotUnconfined(at(podSc, 'seccompProfile'), `${podScPath}.seccompProfile.type`, add);
  listAt(podSc, 'sysctls').forEach((s, i) => {
    const name = at(s, 'name');
    if (!SAFE_SYSCTLS.has(name))
      add('Sysctls', 'baseline', `${podScPath}.sysctls[${i}].name`, `sysctl ${name} is not in the safe set`);
  });

  for (const { c, path, name } of containers) {
    const sc = objAt(c, 'securityContext');
    const scPath = `${path}.securityContext`;
    if (at(sc, 'windowsOptions', 'hostProcess') === true)
      add(
        'HostProcess',
        'baseline',
        `${scPath}.windowsOptions.hostProcess`,
        `container ${name}: host process is not allowed`,
      );
    if (sc.privileged === true)
      add('Privileged Containers', 'baseline', `${scPath}.privileged`, `container ${name} must not be privileged`);
    const added = listAt(sc, 'capabilities', 'add');
    // Restricted allows a subset of what baseline allows: report each capability once, under the stricter rule.
    const allowed = restricted && linux ? RESTRICTED_ADDABLE_CAPABILITIES : BASELINE_CAPABILITIES;
    added.forEach((cap, i) => {
      if (!allowed.has(String(cap)))
        add(
          'Capabilities',
          allowed === BASELINE_CAPABILITIES ? 'baseline' : 'restricted',
          `${scPath}.capabilities.add[${i}]`,
          `container ${name} must not add ${cap}`,
        );
    });
    listAt(c, 'ports').forEach((p, i) => {
      const hostPort = at(p, 'hostPort');
      if (hostPort !== undefined && hostPort !== 0)
        add(
          'Host Ports',
          'baseline',
          `${path}.ports[${i}].hostPort`,
          `container ${name} must not use host port ${hostPort}`,
        );
    });
    for (const probe of PROBE_FIELDS) checkHostField(c[probe], `${path}.${probe}`, name, add);
    for (const hook of ['postStart', 'preStop'] as const)
      checkHostField(at(c, 'lifecycle', hook), `${path}.lifecycle.${hook}`, name, add);
    checkProfile(at(sc, 'appArmorProfile'), `${scPath}.appArmorProfile.type`, 'AppArmor', add);
    checkSeLinux(at(sc, 'seLinuxOptions'), `${scPath}.seLinuxOptions`, add);
    if (sc.procMount !== undefined && sc.procMount !== 'Default')
      add('/proc Mount Type', 'baseline', `${scPath}.procMount`, `container ${name} must use the Default /proc mount`);
    checkSeccompNotUnconfined(at(sc, 'seccompProfile'), `${scPath}.seccompProfile.type`, add);
  }
  if (!restricted) return out;

  // --- restricted ---
  const podNonRoot = podSc.runAsNonRoot === true;
  if (podSc.runAsNonRoot === false)
    add('Running as Non-root', 'restricted', `${podScPath}.runAsNonRoot`, 'runAsNonRoot must be true');
  if (podSc.runAsUser === 0)
    add('Running as Non-root user', 'restricted', `${podScPath}.runAsUser`, 'runAsUser must not be 0');
  const podSeccomp = at(podSc, 'seccompProfile', 'type');
  if (linux && podSeccomp !== undefined && !CONFINED_PROFILE_TYPES.has(podSeccomp) && podSeccomp !== 'Unconfined') {
    add(
      'Seccomp',
      'restricted',
      `${podScPath}.seccompProfile.type`,
      `seccomp profile ${podSeccomp} is not allowed; use RuntimeDefault or Localhost`,
    );
  }
  for (const { c, path, name } of containers) {
    const sc = objAt(c, 'securityContext');
    const scPath = `${path}.securityContext`;
    if (sc.runAsNonRoot === false || (sc.runAsNonRoot !== true && !podNonRoot)) {
      add(
        'Running as Non-root',
        'restricted',
        `${scPath}.runAsNonRoot`,
        `container ${name}: runAsNonRoot must be true (here or in the pod's securityContext)`,
      );
    }
    if (sc.runAsUser === 0)
      add(
        'Running as Non-root user',
        'restricted',
        `${scPath}.runAsUser`,
        `container ${name}: runAsUser must not be 0`,
      );
    if (!linux) continue;
    if (sc.allowPrivilegeEscalation !== false) {
      add(
        'Privilege Escalation',
        'restricted',
        `${scPath}.allowPrivilegeEscalation`,
        `container ${name}: allowPrivilegeEscalation must be false`,
      );
    }
    const type = at(sc, 'seccompProfile', 'type');
    if (
      type === undefined
        ? !CONFINED_PROFILE_TYPES.has(podSeccomp)
        : !CONFINED_PROFILE_TYPES.has(type) && type !== 'Unconfined'
    ) {
      add(
        'Seccomp',
        'restricted',
        `${scPath}.seccompProfile.type`,
        `container ${name}: seccomp profile must be RuntimeDefault or Localhost (here or in the pod's securityContext)`,
      );
    }
    const drop = listAt(sc, 'capabilities', 'drop');
    if (!drop.includes('ALL'))
      add('Capabilities', 'restricted', `${scPath}.capabilities.drop`, `container ${name} must drop ALL capabilities`);
  }
  return out;
}

/** One line per violation, for test failure messages and CLI output. */
export function formatViolations(violations: PodSecurityViolation[]): string {
  return violations.map((v) => `${v.level}/${v.check}: ${v.path}: ${v.message}`).join('\n');
}

type Add = (check: string, level: PodSecurityLevel, path: string, message: string) => void;

function checkProfile(profile: unknown, path: string, check: string, add: Add): void {
  const type = at(profile, 'type');
  if (type !== undefined && !CONFINED_PROFILE_TYPES.has(type))
    add(check, 'baseline', path, `${check} profile ${type} is not allowed; use RuntimeDefault or Localhost`);
}

function checkSeccompNotUnconfined(profile: unknown, path: string, add: Add): void {
  if (at(profile, 'type') === 'Unconfined') add('Seccomp', 'baseline', path, 'seccomp must not be Unconfined');
}

function checkSeLinux(options: unknown, path: string, add: Add): void {
  if (!isObj(options)) return;
  if (options.type !== undefined && !SELINUX_TYPES.has(options.type))
    add('SELinux', 'baseline', `${path}.type`, `SELinux type ${options.type} is not allowed`);
  for (const field of ['user', 'role'] as const) {
    if (options[field] !== undefined && options[field] !== '')
      add('SELinux', 'baseline', `${path}.${field}`, `SELinux ${field} must not be set`);
  }
}

/** Host Probes / Lifecycle Hooks (Kubernetes 1.34+): a probe or hook must not aim at another host. */
function checkHostField(handler: unknown, path: string, container: string, add: Add): void {
  if (!isObj(handler)) return;
  for (const kind of ['httpGet', 'tcpSocket'] as const) {
    const host = at(handler, kind, 'host');
    if (host !== undefined && host !== '') {
      add(
        'Host Probes / Lifecycle Hooks',
        'baseline',
        `${path}.${kind}.host`,
        `container ${container}: ${kind}.host must be unset (got ${host})`,
      );
    }
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at a path of plain objects in unchecked input; undefined where a step is missing or not an object. */
function at(v: unknown, ...keys: string[]): unknown {
  for (const key of keys) v = isObj(v) ? v[key] : undefined;
  return v;
}

/** The object at a path, or an empty one. */
function objAt(v: unknown, ...keys: string[]): Obj {
  const found = at(v, ...keys);
  return isObj(found) ? found : {};
}

/** The list at a path, or an empty one. */
function listAt(v: unknown, ...keys: string[]): unknown[] {
  const found = at(v, ...keys);
  return Array.isArray(found) ? found : [];
}
