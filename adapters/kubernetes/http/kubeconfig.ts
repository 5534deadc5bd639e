/**
 * kubeconfig → ClusterConnection, without @kubernetes/client-node. Every kubeconfig first passes the
 * cluster access policy (adapters/cluster-access/policy.ts): no exec or auth-provider credentials, no file
 * references, https servers (plain http to loopback only), no link-local or metadata addresses. There is
 * no option to relax it: this reader serves the functions, which must never run a command or read a
 * local file because a kubeconfig says so.
 */
import { parse } from 'yaml';
import { AccessPolicyError, checkKubeconfig, checkKubeconfigSize } from '../../cluster-access/policy.ts';
import type { ClusterConnection } from './connection.ts';

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
  /** Where in the kubeconfig, e.g. `users[0].user.exec`, `clusters[admin].server` or `contexts`. */
  field: string;
  /** What was expected or why it is refused: our own words, never a value from the kubeconfig. */
  rule: string;
  /** True when the access policy refused it (exec, file reference, server address), not a malformed file. */
  refused: boolean;
  constructor(field: string, expected: string, refused = false) {
    super(`${field}: ${expected}`);
    this.field = field;
    this.rule = expected;
    this.refused = refused;
  }
}

export interface KubeconfigOptions {
  /** Context to use; default current-context. */
  context?: string;
}

/** Parses untrusted kubeconfig text: bounded size, no YAML aliases (no alias expansion bombs). */
export function parseKubeconfig(text: string): unknown {
  try {
    checkKubeconfigSize(text);
  } catch (err) {
    throw policyError(err);
  }
  try {
    return parse(text, { maxAliasCount: 0, prettyErrors: false, uniqueKeys: true });
  } catch {
    // The YAML error quotes the offending line, which may hold a credential.
    throw new KubeconfigError('(document)', 'expected kubeconfig YAML (without aliases), could not parse it');
  }
}

function policyError(err: unknown): unknown {
  return err instanceof AccessPolicyError ? new KubeconfigError(err.field, err.rule, true) : err;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export function connectionFromKubeconfig(text: string, options: KubeconfigOptions = {}): ClusterConnection {
  const doc = parseKubeconfig(text);
  try {
    checkKubeconfig(doc);
  } catch (err) {
    throw policyError(err);
  }
  if (!isObj(doc))
    throw new KubeconfigError('(document)', 'expected a kubeconfig mapping with clusters, users and contexts');
  const contextName = options.context ?? doc['current-context'];
  if (typeof contextName !== 'string' || !contextName) {
    throw new KubeconfigError('current-context', 'expected the name of a context (none set and no context given)');
  }
  const context = named(doc, 'contexts', 'context', contextName);
  const clusterName = str(context, 'cluster', `contexts[${contextName}].cluster`, true);
  const cluster = named(doc, 'clusters', 'cluster', clusterName);
  const userName = str(context, 'user', `contexts[${contextName}].user`, false);
  const connection = clusterPart(cluster, `clusters[${clusterName}]`);
  if (userName) Object.assign(connection, userPart(named(doc, 'users', 'user', userName), `users[${userName}]`));
  return connection;
}

/** The inner mapping of the entry called `name` in the named list `list` (contexts, clusters, users). */
function named(doc: Obj, list: string, inner: string, name: string): Obj {
  const entries = doc[list] ?? [];
  if (!Array.isArray(entries)) throw new KubeconfigError(list, `expected a list of {name, ${inner}} entries`);
  const entry = entries.find((e) => isObj(e) && e.name === name);
  if (!entry) {
    const have = entries.map((e) => (isObj(e) ? String(e.name) : '?')).join(', ') || 'none';
    throw new KubeconfigError(list, `no ${inner} "${name}" (have: ${have})`);
  }
  const value = (entry as Obj)[inner] ?? {};
  if (!isObj(value)) throw new KubeconfigError(`${list}[${name}].${inner}`, 'expected a mapping');
  return value;
}

function str(o: Obj, key: string, field: string, required: true): string;
function str(o: Obj, key: string, field: string, required: false): string | undefined;
function str(o: Obj, key: string, field: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new KubeconfigError(field, 'expected a non-empty string');
    return undefined;
  }
  if (typeof v !== 'string')
    throw new KubeconfigError(field, `expected a string, got ${Array.isArray(v) ? 'list' : typeof v}`);
  return v;
}

function pemFromData(o: Obj, key: string, field: string, marker: string): string | undefined {
  const data = str(o, key, field, false);
  if (data === undefined) return undefined;
  const pem = Buffer.from(data, 'base64').toString('utf8');
  if (!pem.includes(marker)) throw new KubeconfigError(field, `expected base64 of a PEM block (${marker}...)`);
  return pem;
}

function clusterPart(c: Obj, at: string): ClusterConnection {
  const server = str(c, 'server', `${at}.server`, true);
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new KubeconfigError(`${at}.server`, 'expected an http(s) URL');
  const connection: ClusterConnection = { server };
  const caPem = pemFromData(
    c,
    'certificate-authority-data',
    `${at}.certificate-authority-data`,
    '-----BEGIN CERTIFICATE',
  );
  const insecure = c['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean')
    throw new KubeconfigError(`${at}.insecure-skip-tls-verify`, 'expected true or false');
  if (insecure && caPem && url.protocol === 'https:') {
    // As kubectl: trusting a CA and skipping verification at once is a contradiction, not a preference.
    throw new KubeconfigError(
      `${at}.insecure-skip-tls-verify`,
      'expected no certificate authority when TLS verification is skipped',
    );
  }
  if (caPem) connection.caPem = caPem;
  if (insecure) connection.insecureSkipTlsVerify = true;
  const serverName = str(c, 'tls-server-name', `${at}.tls-server-name`, false);
  if (serverName) connection.tlsServerName = serverName;
  return connection;
}

function userPart(u: Obj, at: string): Partial<ClusterConnection> {
  for (const key of ['username', 'password', 'as', 'as-groups', 'as-uid', 'as-user-extra']) {
    if (u[key] !== undefined)
      throw new KubeconfigError(`${at}.${key}`, 'not supported; use a token or a client certificate');
  }
  const out: Partial<ClusterConnection> = {};
  const token = str(u, 'token', `${at}.token`, false);
  if (token) out.token = token;
  const cert = pemFromData(u, 'client-certificate-data', `${at}.client-certificate-data`, '-----BEGIN CERTIFICATE');
  const key = pemFromData(u, 'client-key-data', `${at}.client-key-data`, 'PRIVATE KEY-----');
  if (!!cert !== !!key)
    throw new KubeconfigError(
      `${at}.${cert ? 'client-key' : 'client-certificate'}`,
      'expected both a client certificate and its key, got only one',
    );
  if (cert && key) Object.assign(out, { clientCertPem: cert, clientKeyPem: key });
  return out;
}
