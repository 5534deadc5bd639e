/**
 * Request bodies: reading with kube-apiserver's 3 MiB limit, decoding JSON or YAML, and the BadRequest
 * messages kube gives for bodies it cannot decode or whose apiVersion/kind do not fit the URL.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { decodeKubeProtobuf, ProtobufDecodeError } from '../protobuf/decode.ts';
import { groupVersion, type ResourceInfo } from '../registry.ts';
import { ApiError, badRequest, unsupportedMediaType } from './errors.ts';
import { type ApiObject, isPlainObject } from './objects.ts';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      throw new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY_BYTES}`);
    }
    chunks.push(chunk as Buffer);
  }
  const [only] = chunks;
  return chunks.length === 1 && only ? only : Buffer.concat(chunks);
}

/** summarizeData from kube's decode errors: the start of a JSON object, else a hex dump. */
function summarize(body: Buffer): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, 30);
  const more = body.length > 30 ? ' ...' : '';
  return body.readUInt8(0) === 0x7b ? head.toString('utf8') + more : head.toString('hex') + more;
}

export function mediaType(contentType: string | undefined): string {
  const [type = ''] = (contentType ?? '').split(';');
  return type.trim().toLowerCase();
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

/** Body format from Content-Type: JSON (default) or YAML; others get 415. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const mt = mediaType(contentType);
  if (mt === '' || mt === 'application/json' || mt === '*/*') return 'json';
  if (mt === 'application/yaml' || mt === 'application/x-yaml' || mt === 'text/yaml') return 'yaml';
  if (mt === PROTOBUF) return 'protobuf'; // protobuf helper: typed clients' DeleteOptions (kubectl drain)
  throw unsupportedMediaType(contentType ?? '');
}

/** Object bodies may also be protobuf (built-in kinds only), as kubectl's typed clients send them. */
function decodeProtobufObject(body: Buffer, info: DecodeTarget): unknown {
  if (info.custom) throw unsupportedMediaType(PROTOBUF);
  try {
    return decodeKubeProtobuf(body).object;
  } catch (err) {
    if (err instanceof ProtobufDecodeError || err instanceof RangeError || err instanceof SyntaxError) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${info.kind}): ${err.message} (${summarize(body)})`,
      );
    }
    throw err;
  }
}

/** Parses JSON or YAML text; the error text is what follows "couldn't get version/kind;" in kube's message. */
export function parseText(body: Buffer, format: BodyFormat): unknown {
  if (format === 'protobuf') return decodeKubeProtobuf(body).object; // protobuf helper: see ../protobuf/decode.ts
  const text = body.toString('utf8');
  if (format === 'yaml') {
    // Server-side apply bodies are YAML by content type but JSON from every client library (the reconciler's
    // included), and JSON is YAML: JSON.parse reads them many times faster than the YAML parser. Anything it
    // refuses goes to the YAML parser, whose words the error keeps.
    if (text.trimStart().startsWith('{')) {
      try {
        return JSON.parse(text);
      } catch {
        // Flow-style YAML, or broken: the YAML parser decides.
      }
    }
    try {
      return parseYaml(text, { maxAliasCount: 100 });
    } catch (err) {
      const msg = err instanceof YAMLParseError ? err.message.split('\n')[0] : (err as Error).message;
      throw new DecodeError(`error converting YAML to JSON: yaml: ${msg}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DecodeError(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

class DecodeError extends Error {}

/** The kind a body must be: a resource's, or a subresource's own (pods/binding takes a Binding). */
export type DecodeTarget = Pick<ResourceInfo, 'kind' | 'group' | 'version' | 'custom'>;

/**
 * Decodes an object body for `info`: defaults apiVersion/kind from the URL as kube's decoder does, and
 * rejects a body of another kind or version with kube's "cannot be handled as a" BadRequest.
 */
export function decodeObject(body: Buffer, contentType: string | undefined, info: DecodeTarget): ApiObject {
  let parsed: unknown;
  try {
    parsed =
      mediaType(contentType) === PROTOBUF ? decodeProtobufObject(body, info) : parseText(body, bodyFormat(contentType));
  } catch (err) {
    if (err instanceof DecodeError) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${info.kind}): ${err.message} (${summarize(body)})`,
      );
    }
    throw err;
  }
  if (!isPlainObject(parsed)) {
    const got = Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed;
    throw badRequest(
      `the object provided is unrecognized (must be of type ${info.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${got} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (${summarize(body)})`,
    );
  }
  const obj = parsed;
  const expectedGv = groupVersion(info.group, info.version);
  if (obj.apiVersion !== undefined && typeof obj.apiVersion !== 'string') {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${info.kind}): apiVersion must be a string (${summarize(body)})`,
    );
  }
  if (obj.kind !== undefined && typeof obj.kind !== 'string') {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${info.kind}): kind must be a string (${summarize(body)})`,
    );
  }
  const kind = (obj.kind as string | undefined) || info.kind;
  const apiVersion = (obj.apiVersion as string | undefined) || expectedGv;
  if (kind !== info.kind || apiVersion !== expectedGv) {
    const slash = apiVersion.indexOf('/');
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    if (group === info.group && kind === info.kind) {
      throw badRequest(
        `the API version in the data (${apiVersion}) does not match the expected API version (${expectedGv})`,
      );
    }
    throw badRequest(
      `${kind} in version "${version}" cannot be handled as a ${info.kind}: no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`,
    );
  }
  obj.kind = kind;
  obj.apiVersion = apiVersion;
  if (obj.metadata !== undefined && !isPlainObject(obj.metadata)) {
    throw badRequest(
      `${info.kind} in version "${info.version}" cannot be handled as a ${info.kind}: json: cannot unmarshal ${typeof obj.metadata} into Go struct field ${info.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  // Kind and apiVersion are set; a missing metadata is added by meta() where the object is written.
  return obj as ApiObject;
}

/** Decodes a patch or options body (JSON or YAML text), with kube's BadRequest wording for bad input. */
export function decodePatchBody(body: Buffer, format: BodyFormat): unknown {
  try {
    return parseText(body, format);
  } catch (err) {
    if (err instanceof DecodeError)
      throw badRequest(err.message.replace("couldn't get version/kind; json parse error: ", 'error decoding patch: '));
    throw err;
  }
}
