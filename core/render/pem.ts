/**
 * PEM (RFC 7468) for the PKI's keys: enough to read back what we wrote and what OpenSSL writes, without
 * loading an X.509 library on the reuse path.
 */

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The DER bytes of the first PEM block (any label); throws when there is none or its body is not base64. */
export function pemDecode(pem: string): Buffer {
  const match = BLOCK.exec(pem);
  if (!match) throw new Error('PEM: expected a -----BEGIN <label>----- … -----END <label>----- block');
  const body = (match[2] ?? '').replace(/\s+/g, '');
  // Encapsulated headers (Proc-Type, DEK-Info) mean an encrypted legacy key: not something we can use.
  if (!body || !BASE64.test(body) || body.length % 4 !== 0)
    throw new Error(`PEM: the ${match[1]} block is not plain base64`);
  return Buffer.from(body, 'base64');
}

/** PEM text of DER bytes, 64 characters a line and no trailing newline (as @peculiar/x509 writes it). */
export function pemEncode(der: ArrayBuffer | ArrayBufferView, label: string): string {
  const bytes = ArrayBuffer.isView(der) ? Buffer.from(der.buffer, der.byteOffset, der.byteLength) : Buffer.from(der);
  const lines = bytes.toString('base64').match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`].join('\n');
}
