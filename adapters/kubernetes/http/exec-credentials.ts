/**
 * client-go style exec credential plugins: run the command, read an ExecCredential from its stdout, cache
 * it until its expirationTimestamp. Messages name the command only — its output carries secrets.
 */
import type { ExecCredentialConfig } from './connection.ts';

/** Runs `command args` with exactly `env`; resolves with stdout. Injectable for tests. */
export type ExecRunner = (command: string, args: string[], env: NodeJS.ProcessEnv) => Promise<string>;

export interface ExecCredential {
  token?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  /** ms since epoch; undefined = valid for the life of the process. */
  expiresAt?: number;
}

const DEFAULT_API_VERSION = 'client.authentication.k8s.io/v1';
const EXEC_TIMEOUT_MS = 60_000;

export const defaultExecRunner: ExecRunner = (command, args, env) =>
  new Promise((resolve, reject) => {
    // Loaded on first use: only kubeconfig files with exec users need it, never a Lambda.
    process.getBuiltinModule('node:child_process').execFile(command, args, { env, timeout: EXEC_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' }, (err, stdout) => {
      if (!err) return resolve(stdout);
      // execFile's message quotes stderr; report only how it ended.
      const e = err as NodeJS.ErrnoException & { code?: unknown; signal?: unknown; killed?: boolean };
      const how = e.code === 'ENOENT' ? 'not found' : e.killed ? `timed out after ${EXEC_TIMEOUT_MS} ms` : typeof e.code === 'number' ? `exit code ${e.code}` : e.signal ? `killed by ${String(e.signal)}` : String(e.code ?? 'failed');
      reject(Object.assign(new Error(how), { code: e.code }));
    });
  });

export class ExecCredentialSource {
  private readonly config: ExecCredentialConfig;
  private readonly runner: ExecRunner;
  private cached?: Promise<ExecCredential>;

  constructor(config: ExecCredentialConfig, runner: ExecRunner = defaultExecRunner) {
    this.config = config;
    this.runner = runner;
  }

  /** The cached credential while it is valid; else runs the command (concurrent callers share one run). */
  async get(): Promise<ExecCredential> {
    const pending = this.cached;
    if (pending) {
      const cred = await pending.catch(() => undefined);
      if (cred && (cred.expiresAt === undefined || cred.expiresAt > Date.now())) return cred;
      if (this.cached !== pending) return this.get();
    }
    const run = this.run();
    this.cached = run;
    run.catch(() => {
      if (this.cached === run) this.cached = undefined;
    });
    return run;
  }

  /** Forget the credential (the server rejected it with 401); the next get() runs the command again. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async run(): Promise<ExecCredential> {
    const { command, args = [], env = [] } = this.config;
    const apiVersion = this.config.apiVersion ?? DEFAULT_API_VERSION;
    const fullEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const { name, value } of env) fullEnv[name] = value;
    fullEnv.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
    let stdout: string;
    try {
      stdout = await this.runner(command, args, fullEnv);
    } catch (err) {
      throw new Error(`exec credential command "${command}" failed: ${(err as Error).message}`);
    }
    return parseExecCredential(stdout, command, apiVersion);
  }
}

function parseExecCredential(stdout: string, command: string, apiVersion: string): ExecCredential {
  const bad = (what: string) => new Error(`exec credential command "${command}" did not print an ExecCredential: ${what}`);
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw bad('expected JSON on stdout');
  }
  const d = doc as { kind?: unknown; apiVersion?: unknown; status?: Record<string, unknown> } | null;
  if (!d || typeof d !== 'object' || d.kind !== 'ExecCredential') throw bad('expected kind ExecCredential');
  if (d.apiVersion !== apiVersion) throw bad(`expected apiVersion ${apiVersion}, got ${typeof d.apiVersion === 'string' ? d.apiVersion : 'none'}`);
  const s = d.status;
  if (!s || typeof s !== 'object') throw bad('expected a status');
  const field = (k: string) => {
    const v = s[k];
    if (v !== undefined && typeof v !== 'string') throw bad(`status.${k}: expected a string`);
    return v || undefined;
  };
  const cred: ExecCredential = { token: field('token'), clientCertPem: field('clientCertificateData'), clientKeyPem: field('clientKeyData') };
  if (!!cred.clientCertPem !== !!cred.clientKeyPem) throw bad('status: expected clientCertificateData and clientKeyData together');
  if (!cred.token && !cred.clientCertPem) throw bad('status: expected a token or a client certificate');
  const exp = field('expirationTimestamp');
  if (exp) {
    const t = Date.parse(exp);
    if (Number.isNaN(t)) throw bad('status.expirationTimestamp: expected an RFC 3339 time');
    cred.expiresAt = t;
  }
  return cred;
}
