/**
 * What cluster access the fleet accepts — one pure check, used by `spiritctl clusters add` before it
 * registers a cluster and by the functions each time they load a cluster's access (a registry entry or a
 * secret may have been written without the CLI). No I/O here: node:net's address parsing only.
 *
 * Refused, whatever the source:
 * - exec and auth-provider credentials: a kubeconfig must never make a function run a command.
 * - file references (certificate-authority, client-certificate, client-key, tokenFile): the function would
 *   read a file of its own host and send it to a server the kubeconfig names. Inline `*-data` only.
 * - servers that are not https — except plain http to a loopback address (127.0.0.0/8, ::1, localhost),
 *   which the local stack's clusters serve on: a loopback address reaches only the caller's own host, so
 *   no credential crosses a network.
 * - link-local and cloud metadata addresses in any spelling (169.254.0.0/16, fe80::/10, fd00:ec2::254,
 *   IPv4-mapped and NAT64 forms, decimal/hex/octal IPv4, metadata host names): a function's credentials or
 *   requests must not be steerable at the instance metadata service.
 * - URLs carrying a user name or password, and proxies.
 *
 * Errors name the field (`users[0].user.exec`, `clusters[1].cluster.server`, `--url`) and the rule,
 * never a value from the input: values may be tokens, keys or URLs with credentials in them.
 */
import { BlockList, isIP } from 'node:net';

/** The largest kubeconfig accepted (a kubeconfig with a few inline certificates is a few KB). */
export const KUBECONFIG_MAX_BYTES = 256 * 1024;
/** Deepest nesting accepted in a kubeconfig document (a real one is at most ~6 levels deep). */
export const KUBECONFIG_MAX_DEPTH = 16;

export class AccessPolicyError extends Error {
  override name = 'AccessPolicyError';
  /** Where: a kubeconfig field path or a CLI flag — never a value. */
  readonly field: string;
  /** Why, without any value from the input. */
  readonly rule: string;
  constructor(field: string, rule: string) {
    super(`${field}: ${rule}`);
    this.field = field;
    this.rule = rule;
  }
}

const linkLocal = new BlockList();
// IPv4 link-local: AWS/GCP/Azure/OpenStack metadata 169.254.169.254, ECS task metadata 169.254.170.2, ...
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
// Alibaba Cloud's metadata service (not link-local, but a metadata address all the same).
linkLocal.addAddress('100.100.100.200', 'ipv4');
// "This host" (0.0.0.0 connects to the local host on Linux): neither a cluster nor honest loopback.
linkLocal.addSubnet('0.0.0.0', 8, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');
linkLocal.addAddress('fd00:ec2::254', 'ipv6');
linkLocal.addAddress('::', 'ipv6');
// NAT64 (64:ff9b::/96) and IPv4-compatible (::/96) spellings of 169.254.0.0/16; IPv4-mapped
// (::ffff:169.254.x.y) is matched by the IPv4 rule itself (BlockList checks mapped addresses as IPv4).
linkLocal.addSubnet('64:ff9b::a9fe:0', 112, 'ipv6');
linkLocal.addSubnet('::a9fe:0', 112, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Host names of metadata services (lowercase, no trailing dot). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** The host part of a parsed URL as an address family, or undefined for a name. */
function addressOf(url: URL): { host: string; family?: 'ipv4' | 'ipv6' } {
  // WHATWG URL parsing has already turned 2852039166, 0xa9fea9fe and 0251.0376.0251.0376 into
  // 169.254.169.254, and put IPv6 in brackets in canonical form; the transport connects to exactly this.
  const host = url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.+$/, '');
  const v = isIP(host);
  return { host, family: v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : undefined };
}

/** True for 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost. */
export function isLoopbackHost(url: URL): boolean {
  const { host, family } = addressOf(url);
  if (!family) return host === 'localhost';
  return loopback.check(host, family);
}

/** Why this API server URL is refused, or undefined when it is accepted. */
export function serverUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value) return 'expected an https URL';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'expected an https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'expected an https URL';
  if (url.username || url.password)
    return 'expected no user name or password in the URL (use a token or client certificate)';
  const { host, family } = addressOf(url);
  if (!host) return 'expected a host in the URL';
  if (family ? linkLocal.check(host, family) : METADATA_NAMES.has(host)) {
    return 'refused: a link-local or cloud metadata address is never a cluster API server';
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url)) {
    return 'expected https (plain http is accepted only to a loopback address: 127.0.0.0/8, ::1, localhost)';
  }
  return undefined;
}

/** Throws AccessPolicyError naming `field` when the URL is refused. */
export function checkServerUrl(value: unknown, field: string): void {
  const problem = serverUrlProblem(value);
  if (problem) throw new AccessPolicyError(field, problem);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const CLUSTER_FILE_FIELDS = ['certificate-authority'];
const USER_FILE_FIELDS = ['client-certificate', 'client-key', 'tokenFile'];
const INLINE_HINT =
  'embed the data instead (`kubectl config view --minify --flatten` writes a kubeconfig with inline *-data)';

/** The refusal of a kubeconfig larger than KUBECONFIG_MAX_BYTES. */
export function oversizedKubeconfig(): AccessPolicyError {
  return new AccessPolicyError('(document)', `expected a kubeconfig of at most ${KUBECONFIG_MAX_BYTES / 1024} KB`);
}

/** Byte length check for kubeconfig text, before it is parsed. */
export function checkKubeconfigSize(text: string): void {
  if (Buffer.byteLength(text, 'utf8') > KUBECONFIG_MAX_BYTES) throw oversizedKubeconfig();
}

function checkDepth(value: unknown, depth: number): void {
  if (depth > KUBECONFIG_MAX_DEPTH)
    throw new AccessPolicyError(
      '(document)',
      `expected a kubeconfig nested at most ${KUBECONFIG_MAX_DEPTH} levels deep`,
    );
  if (Array.isArray(value)) for (const v of value) checkDepth(v, depth + 1);
  else if (isObj(value)) for (const v of Object.values(value)) checkDepth(v, depth + 1);
}

/**
 * Checks a parsed kubeconfig document: every cluster and every user, not only those of the current
 * context (a registration may name another context later, and a refused credential has no business being
 * stored with the fleet's access either). Throws AccessPolicyError on the first refusal.
 */
export function checkKubeconfig(doc: unknown): void {
  if (!isObj(doc))
    throw new AccessPolicyError('(document)', 'expected a kubeconfig mapping with clusters, users and contexts');
  checkDepth(doc, 0);
  const list = (key: string): unknown[] => {
    const v = doc[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new AccessPolicyError(key, 'expected a list');
    return v;
  };
  list('clusters').forEach((entry, i) => {
    const cluster = isObj(entry) ? entry.cluster : undefined;
    if (!isObj(cluster)) return; // the reader names a malformed entry when it is the one used
    const at = `clusters[${i}].cluster`;
    for (const key of CLUSTER_FILE_FIELDS) {
      if (cluster[key] !== undefined && cluster[key] !== null && cluster[key] !== '') {
        throw new AccessPolicyError(`${at}.${key}`, `file references are refused: ${INLINE_HINT}`);
      }
    }
    if (cluster['proxy-url'] !== undefined)
      throw new AccessPolicyError(
        `${at}.proxy-url`,
        'proxies are not supported; the functions connect to the server directly',
      );
    checkServerUrl(cluster.server, `${at}.server`);
  });
  list('users').forEach((entry, i) => {
    const user = isObj(entry) ? entry.user : undefined;
    if (!isObj(user)) return;
    const at = `users[${i}].user`;
    if (user.exec !== undefined && user.exec !== null) {
      throw new AccessPolicyError(
        `${at}.exec`,
        'exec credential plugins are refused: the functions never run a command from a kubeconfig; use a token or a client certificate, or register an EKS cluster with --eks',
      );
    }
    if (user['auth-provider'] !== undefined && user['auth-provider'] !== null) {
      throw new AccessPolicyError(
        `${at}.auth-provider`,
        'auth-provider credentials are refused; use a token or a client certificate',
      );
    }
    for (const key of USER_FILE_FIELDS) {
      if (user[key] !== undefined && user[key] !== null && user[key] !== '') {
        throw new AccessPolicyError(`${at}.${key}`, `file references are refused: ${INLINE_HINT}`);
      }
    }
  });
}
