/**
 * Finds key material in text: the secrets known to be present in a run (private keys, tokens, kubeconfig
 * credentials) in any usual encoding, and generic patterns of secrets nobody told us about. A finding names
 * where it was and which kind of secret it was, never the secret itself, so a failing test prints nothing
 * sensitive.
 */
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { parse as parseYaml } from 'yaml';

export type SecretKind = 'private-key' | 'token' | 'password' | 'opaque-secret';

export interface KnownSecret {
  kind: SecretKind;
  /** Where the secret came from (safe to print: a name, never the value). */
  label: string;
  /** The secret bytes: for a private key its private scalar(s), for a token the token text. */
  bytes: Buffer;
  /** Text secrets (tokens, passwords) are also searched for literally. */
  text?: string;
}

export interface Finding {
  /** Where the text came from, e.g. `log line 12` or `table item PK=…`. */
  where: string;
  /** `known <kind> (<label>)` or `pattern <name>`. */
  what: string;
}

/** Patterns that mean a secret is present, whoever's it is. */
export const GENERIC_PATTERNS: Record<string, RegExp> = {
  'PEM private key': /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/,
  'kubeconfig client-key-data': /client-key-data/,
  'kubeconfig document': /current-context/,
  'token value': /\btoken["']?\s*[:=]\s*["']?[A-Za-z0-9._~+/-]{16,}/i,
  'Bearer token': /\bBearer\s+[A-Za-z0-9._~+/-]{16,}/,
  'EKS token': /k8s-aws-v1\.[A-Za-z0-9_-]{20,}/,
};

/** Characters of base64, base64url and hex: the alphabets encoded secrets are written in. */
const ENCODED_RUN = /[A-Za-z0-9+/_=-]{24,}/g;
/** Window length for matching: 24 base64 characters carry 144 bits, so a hit is never chance. */
const WINDOW = 24;
const MAX_DECODE_DEPTH = 3;

/**
 * The secret-bearing substrings of `bytes` in base64, base64url and hex at every alignment: whatever larger
 * buffer the bytes sit in, one of the three base64 alignments appears verbatim in its encoding.
 */
export function encodedForms(bytes: Buffer): string[] {
  const forms = [bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const firstGroup = Math.ceil(shift / 3);
    const endGroup = Math.floor((shift + bytes.length) / 3);
    const inner = encoded.slice(firstGroup * 4, endGroup * 4);
    forms.push(inner, inner.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms.filter((f) => f.length >= WINDOW);
}

/** The private parts of a PEM private key (EC: d; RSA: d, p, q), or [] when the PEM is not a private key. */
export function privateScalars(pem: string): Buffer[] {
  let jwk: JsonWebKey;
  try {
    jwk = createPrivateKey(pem).export({ format: 'jwk' });
  } catch {
    return [];
  }
  return (['d', 'p', 'q'] as const).flatMap((k) =>
    typeof jwk[k] === 'string' ? [Buffer.from(jwk[k] as string, 'base64url')] : [],
  );
}

const PEM_PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;

/** Every private key in a text that may hold PEM blocks (a bundle, a key file). */
export function privateKeysInPem(text: string, label: string): KnownSecret[] {
  return [...text.matchAll(PEM_PRIVATE_KEY)].flatMap((m, i) =>
    privateScalars(m[0]).map((bytes) => ({ kind: 'private-key' as const, label: `${label} key #${i + 1}`, bytes })),
  );
}

function textSecret(kind: SecretKind, label: string, text: string): KnownSecret {
  return { kind, label, bytes: Buffer.from(text, 'utf8'), text };
}

/** The credentials of a kubeconfig: tokens, passwords, client keys (embedded or in files named by it). */
export function kubeconfigSecrets(yamlText: string, label: string): KnownSecret[] {
  let doc: any;
  try {
    doc = parseYaml(yamlText);
  } catch {
    return [];
  }
  const out: KnownSecret[] = [];
  for (const u of Array.isArray(doc?.users) ? doc.users : []) {
    const user = u?.user ?? {};
    const where = `${label} user ${String(u?.name)}`;
    if (typeof user.token === 'string' && user.token) out.push(textSecret('token', `${where} token`, user.token));
    if (typeof user.password === 'string' && user.password)
      out.push(textSecret('password', `${where} password`, user.password));
    if (typeof user['client-key-data'] === 'string') {
      out.push(
        ...privateKeysInPem(
          Buffer.from(user['client-key-data'], 'base64').toString('utf8'),
          `${where} client-key-data`,
        ),
      );
    }
    const authToken = user['auth-provider']?.config?.['access-token'] ?? user['auth-provider']?.config?.['id-token'];
    if (typeof authToken === 'string' && authToken)
      out.push(textSecret('token', `${where} auth-provider token`, authToken));
  }
  return out;
}

function looksLikeKubeconfig(text: string): boolean {
  return /^kind:\s*Config\b/m.test(text) && /^users:/m.test(text);
}

/**
 * The secrets a Kubernetes Secret holds: private keys in PEM values, kubeconfig credentials, tokens, and any
 * other value that is not a certificate or public key (Opaque data is secret unless shown otherwise).
 */
export function secretObjectSecrets(secret: {
  metadata?: { namespace?: string; name?: string };
  data?: Record<string, string>;
}): KnownSecret[] {
  const out: KnownSecret[] = [];
  const base = `Secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    const text = Buffer.from(value, 'base64').toString('utf8');
    const label = `${base} data ${key}`;
    if (text.includes('-----BEGIN')) out.push(...privateKeysInPem(text, label));
    else if (looksLikeKubeconfig(text)) out.push(...kubeconfigSecrets(text, label));
    else if (text.length >= 16)
      out.push({ kind: key === 'token' ? 'token' : 'opaque-secret', label, bytes: Buffer.from(value, 'base64'), text });
  }
  return out;
}

/** Removes what separates the pieces of an encoded secret in text: whitespace and JSON-escaped newlines. */
function compact(text: string): string {
  return text.replace(/\\r|\\n|\\t|\s+/g, '');
}

function mostlyPrintable(s: string): boolean {
  if (s.length < 16) return false;
  let printable = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 10 || c === 13 || c === 9) printable++;
  }
  return printable / s.length >= 0.9;
}

export interface ScanStats {
  texts: number;
  characters: number;
}

export class SecretScanner {
  readonly secrets: KnownSecret[];
  readonly stats: ScanStats = { texts: 0, characters: 0 };
  /** Every WINDOW-long piece of every encoded form, at every offset, to the secret it belongs to. */
  #windows = new Map<string, KnownSecret[]>();
  /** Literal text secrets (tokens, passwords) too short or too plain for the window index. */
  #literals: KnownSecret[] = [];
  #stride = 1;

  constructor(secrets: KnownSecret[]) {
    this.secrets = secrets.filter((s) => s.bytes.length >= 12);
    let shortest = Infinity;
    for (const secret of this.secrets) {
      const forms = encodedForms(secret.bytes);
      if (secret.text && /^[A-Za-z0-9+/_=.~-]+$/.test(secret.text))
        forms.push(...secret.text.split('.').filter((p) => p.length >= WINDOW));
      if (secret.text) this.#literals.push(secret);
      for (const form of forms) {
        shortest = Math.min(shortest, form.length);
        for (let i = 0; i + WINDOW <= form.length; i++) {
          const window = form.slice(i, i + WINDOW);
          const owners = this.#windows.get(window) ?? [];
          // The same key may be known under several names (agent.key and the kubeconfig embedding it).
          if (!owners.includes(secret)) owners.push(secret);
          this.#windows.set(window, owners);
        }
      }
    }
    // Any full occurrence of a form of length L contains a window starting at every offset 0..L-WINDOW, so
    // probing every (L-WINDOW+1)th position of the text cannot step over it.
    this.#stride = Number.isFinite(shortest) ? Math.max(1, shortest - WINDOW + 1) : 1;
  }

  /** Findings in one text; `where` names the text in the findings (keep it free of secrets). */
  scan(where: string, text: string): Finding[] {
    this.stats.texts++;
    this.stats.characters += text.length;
    const found = new Map<string, Finding>();
    this.#scanText(where, text, 0, found);
    return [...found.values()];
  }

  #scanText(where: string, text: string, depth: number, found: Map<string, Finding>): void {
    const add = (what: string) =>
      found.set(what, { where: depth ? `${where} (inside ${depth}× base64)` : where, what });
    for (const [name, re] of Object.entries(GENERIC_PATTERNS)) if (re.test(text)) add(`pattern ${name}`);
    for (const s of this.#literals)
      if (s.text && s.text.length >= 8 && text.includes(s.text)) add(`known ${s.kind} (${s.label})`);
    const packed = compact(text);
    for (const m of packed.matchAll(ENCODED_RUN)) {
      const run = m[0];
      for (let i = 0; i + WINDOW <= run.length; i += this.#stride) {
        for (const hit of this.#windows.get(run.slice(i, i + WINDOW)) ?? []) add(`known ${hit.kind} (${hit.label})`);
      }
      // Last window too, so a run shorter than the stride's reach is still probed at its end.
      for (const hit of this.#windows.get(run.slice(-WINDOW)) ?? []) add(`known ${hit.kind} (${hit.label})`);
      if (depth < MAX_DECODE_DEPTH && run.length >= 32) {
        for (let shift = 0; shift < 4; shift++) {
          const decoded = Buffer.from(run.slice(shift).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString(
            'latin1',
          );
          if (mostlyPrintable(decoded)) this.#scanText(where, decoded, depth + 1, found);
        }
      }
    }
  }
}

/** Formats findings for an assertion message: where and which kind, never the secret. */
export function describeFindings(findings: Finding[], limit = 30): string {
  const lines = findings.slice(0, limit).map((f) => `${f.where}: ${f.what}`);
  if (findings.length > limit) lines.push(`… and ${findings.length - limit} more`);
  return lines.join('\n');
}
