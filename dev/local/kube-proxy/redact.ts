/**
 * Secret values never leave the proxy: a captured body that is (or lists, or streams) Secrets keeps its
 * structure, with every `data`/`stringData` value and the last-applied annotation (which repeats them)
 * replaced. A body of a Secret request that cannot be read as JSON (protobuf, YAML) is not kept at all.
 */

export const REDACTED = 'redacted';
/** base64 of REDACTED, so a redacted Secret is still a valid one to send again. */
export const REDACTED_B64 = Buffer.from(REDACTED).toString('base64');
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function redactSecret(obj: Json): Json {
  const out: Json = { ...obj };
  if (isObject(obj.data)) out.data = Object.fromEntries(Object.keys(obj.data).map((k) => [k, REDACTED_B64]));
  if (isObject(obj.stringData))
    out.stringData = Object.fromEntries(Object.keys(obj.stringData).map((k) => [k, REDACTED]));
  const meta = obj.metadata;
  if (isObject(meta) && isObject(meta.annotations) && LAST_APPLIED in meta.annotations) {
    out.metadata = { ...meta, annotations: { ...meta.annotations, [LAST_APPLIED]: REDACTED } };
  }
  return out;
}

/**
 * Redacts Secrets anywhere a Kubernetes body carries objects: the body, list items, Table rows, a watch
 * event's object.
 * Items of a SecretList carry no kind (kube encodes list items without it), so the list's kind, or the
 * request being about Secrets (`assumeSecrets`), marks them.
 */
export function redactObject(v: unknown, assumeSecrets = false): unknown {
  if (!isObject(v)) return v;
  const listOfSecrets = assumeSecrets || v.kind === 'SecretList';
  if (Array.isArray(v.items)) return { ...v, items: v.items.map((i) => redactObject(i, listOfSecrets)) };
  // A Table's rows carry the whole object unless the client asked for less.
  if (v.kind === 'Table' && Array.isArray(v.rows))
    return {
      ...v,
      rows: v.rows.map((r) => (isObject(r) ? { ...r, object: redactObject(r.object, assumeSecrets) } : r)),
    };
  if (isObject(v.object)) return { ...v, object: redactObject(v.object, assumeSecrets) };
  if (v.kind === 'Secret' || (assumeSecrets && (isObject(v.data) || isObject(v.stringData)))) return redactSecret(v);
  return v;
}

/**
 * The body as it may be kept: JSON (one document, or one per line for a watch stream) with any Secret in it
 * redacted; another body unchanged, unless it is about Secrets (then undefined: it cannot be redacted).
 */
export function keepableBody(body: Buffer, aboutSecrets: boolean): Buffer | undefined {
  if (body.length === 0) return body;
  const text = body.toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    const redacted = JSON.stringify(redactObject(parsed, aboutSecrets));
    return redacted === JSON.stringify(parsed) ? body : Buffer.from(redacted);
  } catch {
    // A watch stream: one JSON document per line.
    try {
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      return Buffer.from(`${lines.map((l) => JSON.stringify(redactObject(JSON.parse(l), aboutSecrets))).join('\n')}\n`);
    } catch {
      return aboutSecrets ? undefined : body;
    }
  }
}
