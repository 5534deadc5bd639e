/**
 * kubeconfig → ClusterConnection, without @kubernetes/client-node. File references and exec plugins are
 * opt-in: a kubeconfig read from a secret store must not make the function read local files (and send
 * them to a server the secret names) or run commands.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import type { ClusterConnection, ExecCredentialConfig } from './connection.ts';

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
  /** Where in the kubeconfig, e.g. `users[admin].exec` or `contexts`. */
  field: string;
  constructor(field: string, expected: string) {
    super(`${field}: ${expected}`);
    this.field = field;
  }
}

export interface KubeconfigOptions {
  /** Context to use; default current-context. */
  context?: string;
  /** Directory relative file references are resolved against (the kubeconfig's directory). */
  baseDir?: string;
  allowExec: boolean;
  allowFiles: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export function connectionFromKubeconfig(text: string, options: KubeconfigOptions): ClusterConnection {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    // The YAML error quotes the offending line, which may hold a credential.
    throw new KubeconfigError('(document)', 'expected kubeconfig YAML, could not parse it');
  }
  if (!isObj(doc)) throw new KubeconfigError('(document)', 'expected a kubeconfig mapping with clusters, users and contexts');
  const contextName = options.context ?? doc['current-context'];
  if (typeof contextName !== 'string' || !contextName) {
    throw new KubeconfigError('current-context', 'expected the name of a context (none set and no context given)');
  }
  const context = named(doc, 'contexts', 'context', contextName);
  const clusterName = str(context, 'cluster', `contexts[${contextName}].cluster`, true)!;
  const cluster = named(doc, 'clusters', 'cluster', clusterName);
  const userName = str(context, 'user', `contexts[${contextName}].user`, false);
  const files = new FileReader(options);
  const connection = clusterPart(cluster, `clusters[${clusterName}]`, files);
  if (userName) Object.assign(connection, userPart(named(doc, 'users', 'user', userName), `users[${userName}]`, files, options.allowExec));
  return connection;
}

/** The inner mapping of the entry called `name` in the named list `list` (contexts, clusters, users). */
function named(doc: Obj, list: string, inner: string, name: string): Obj {
  const entries = doc[list] ?? [];
  if (!Array.isArray(entries)) throw new KubeconfigError(list, 'expected a list of {name, ' + inner + '} entries');
  const entry = entries.find((e) => isObj(e) && e.name === name);
  if (!entry) {
    const have = entries.map((e) => (isObj(e) ? String(e.name) : '?')).join(', ') || 'none';
    throw new KubeconfigError(list, `no ${inner} "${name}" (have: ${have})`);
  }
  const value = (entry as Obj)[inner] ?? {};
  if (!isObj(value)) throw new KubeconfigError(`${list}[${name}].${inner}`, 'expected a mapping');
  return value;
}

function str(o: Obj, key: string, field: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw new KubeconfigError(field, 'expected a non-empty string');
    return undefined;
  }
  if (typeof v !== 'string') throw new KubeconfigError(field, `expected a string, got ${Array.isArray(v) ? 'list' : typeof v}`);
  return v;
}

function pemFromData(o: Obj, key: string, field: string, marker: string): string | undefined {
  const data = str(o, key, field, false);
  if (data === undefined) return undefined;
  const pem = Buffer.from(data, 'base64').toString('utf8');
  if (!pem.includes(marker)) throw new KubeconfigError(field, `expected base64 of a PEM block (${marker}...)`);
  return pem;
}

class FileReader {
  private readonly options: KubeconfigOptions;
  constructor(options: KubeconfigOptions) {
    this.options = options;
  }
  read(o: Obj, key: string, field: string): string | undefined {
    const path = str(o, key, field, false);
    if (path === undefined) return undefined;
    if (!this.options.allowFiles) throw new KubeconfigError(field, 'file references are not allowed for this kubeconfig; embed the data (the *-data fields) instead');
    const full = resolve(this.options.baseDir ?? process.cwd(), path);
    try {
      return readFileSync(full, 'utf8');
    } catch (err) {
      throw new KubeconfigError(field, `expected a readable file, could not read ${full} (${(err as { code?: string }).code ?? 'error'})`);
    }
  }
}

function clusterPart(c: Obj, at: string, files: FileReader): ClusterConnection {
  const server = str(c, 'server', `${at}.server`, true)!;
  let url: URL | undefined;
  try {
    url = new URL(server);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new KubeconfigError(`${at}.server`, 'expected an http(s) URL');
  const connection: ClusterConnection = { server };
  const caPem = pemFromData(c, 'certificate-authority-data', `${at}.certificate-authority-data`, '-----BEGIN CERTIFICATE') ?? files.read(c, 'certificate-authority', `${at}.certificate-authority`);
  const insecure = c['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') throw new KubeconfigError(`${at}.insecure-skip-tls-verify`, 'expected true or false');
  if (insecure && caPem && url.protocol === 'https:') {
    // As kubectl: trusting a CA and skipping verification at once is a contradiction, not a preference.
    throw new KubeconfigError(`${at}.insecure-skip-tls-verify`, 'expected no certificate authority when TLS verification is skipped');
  }
  if (caPem) connection.caPem = caPem;
  if (insecure) connection.insecureSkipTlsVerify = true;
  const serverName = str(c, 'tls-server-name', `${at}.tls-server-name`, false);
  if (serverName) connection.tlsServerName = serverName;
  return connection;
}

function userPart(u: Obj, at: string, files: FileReader, allowExec: boolean): Partial<ClusterConnection> {
  if (u['auth-provider'] !== undefined) throw new KubeconfigError(`${at}.auth-provider`, 'not supported (kubectl dropped the built-in auth providers); use exec or a token');
  for (const key of ['username', 'password', 'as', 'as-groups', 'as-uid', 'as-user-extra']) {
    if (u[key] !== undefined) throw new KubeconfigError(`${at}.${key}`, 'not supported; use a token, a client certificate or exec');
  }
  const out: Partial<ClusterConnection> = {};
  const token = str(u, 'token', `${at}.token`, false) ?? files.read(u, 'tokenFile', `${at}.tokenFile`)?.trim();
  if (token) out.token = token;
  const cert = pemFromData(u, 'client-certificate-data', `${at}.client-certificate-data`, '-----BEGIN CERTIFICATE') ?? files.read(u, 'client-certificate', `${at}.client-certificate`);
  const key = pemFromData(u, 'client-key-data', `${at}.client-key-data`, 'PRIVATE KEY-----') ?? files.read(u, 'client-key', `${at}.client-key`);
  if (!!cert !== !!key) throw new KubeconfigError(`${at}.${cert ? 'client-key' : 'client-certificate'}`, 'expected both a client certificate and its key, got only one');
  if (cert && key) Object.assign(out, { clientCertPem: cert, clientKeyPem: key });
  if (u.exec !== undefined) {
    if (!allowExec) throw new KubeconfigError(`${at}.exec`, 'exec credential plugins are not allowed for this kubeconfig');
    out.exec = execPart(u.exec, `${at}.exec`);
  }
  return out;
}

function execPart(e: unknown, at: string): ExecCredentialConfig {
  if (!isObj(e)) throw new KubeconfigError(at, 'expected a mapping with command, args, env, apiVersion');
  const exec: ExecCredentialConfig = { command: str(e, 'command', `${at}.command`, true)! };
  if (e.args !== undefined && e.args !== null) {
    if (!Array.isArray(e.args) || !e.args.every((a) => typeof a === 'string')) throw new KubeconfigError(`${at}.args`, 'expected a list of strings');
    exec.args = e.args;
  }
  if (e.env !== undefined && e.env !== null) {
    if (!Array.isArray(e.env) || !e.env.every((v) => isObj(v) && typeof v.name === 'string' && v.name && typeof v.value === 'string')) {
      throw new KubeconfigError(`${at}.env`, 'expected a list of {name, value} string pairs');
    }
    exec.env = e.env.map((v) => ({ name: (v as Obj).name as string, value: (v as Obj).value as string }));
  }
  const apiVersion = str(e, 'apiVersion', `${at}.apiVersion`, false);
  if (apiVersion) exec.apiVersion = apiVersion;
  return exec;
}
