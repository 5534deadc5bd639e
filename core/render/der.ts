/**
 * DER (ITU-T X.690) for the few ASN.1 types an X.509 v3 certificate of ours is made of, and a reader for
 * the two fields the issuer takes from an existing CA certificate. Why not @peculiar/x509: it round-trips
 * every part through asn1js (serialise, then parse back), and a new pool's seven certificates cost 33 ms
 * of a reconcile that way against 1.6 ms here (docs/decisions/0027-certificates-written-as-der.md).
 * OpenSSL (node:crypto's X509Certificate) reads back and verifies everything written here, in the tests.
 */

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** One element: tag, definite length, content. */
export function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const octets: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) octets.unshift(n % 256);
  return Buffer.concat([Buffer.from([tag, 0x80 | octets.length, ...octets]), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(TAG.sequence, Buffer.concat(items));
/** A SET holding one element: DER orders a SET OF by encoding, which one element needs no sorting for. */
export const setOfOne = (item: Buffer): Buffer => tlv(TAG.set, item);
export const boolean = (value: boolean): Buffer => tlv(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
export const octetString = (bytes: Buffer): Buffer => tlv(TAG.octetString, bytes);
export const ia5String = (text: string): Buffer => tlv(TAG.ia5String, Buffer.from(text, 'ascii'));
/** `[n]` EXPLICIT: a constructed context tag around a whole element. */
export const explicit = (n: number, element: Buffer): Buffer => tlv(0xa0 | n, element);
/** `[n]` IMPLICIT on a primitive: the context tag replaces the element's own. */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from its big-endian magnitude (minimal: no redundant leading zero, sign octet added). */
export function unsignedInteger(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = magnitude.subarray(start);
  const first = bytes[0];
  const content =
    first === undefined ? Buffer.from([0]) : (first & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return tlv(TAG.integer, content);
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n]));

/** A BIT STRING of whole octets. */
export const bitString = (bytes: Buffer): Buffer => tlv(TAG.bitString, Buffer.concat([Buffer.from([0]), bytes]));

/**
 * A named-bit BIT STRING (KeyUsage): bit 0 is the first octet's high bit; DER drops trailing zero bits and
 * counts them in the leading octet.
 */
export function namedBits(bits: number[]): Buffer {
  if (bits.length === 0) return tlv(TAG.bitString, Buffer.from([0]));
  const highest = Math.max(...bits);
  const octets = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) {
    const index = Math.floor(bit / 8);
    const octet = octets[index];
    if (octet === undefined) throw new Error(`namedBits: bit ${bit} is out of range`);
    octets[index] = octet | (0x80 >> (bit % 8));
  }
  return tlv(TAG.bitString, Buffer.concat([Buffer.from([7 - (highest % 8)]), octets]));
}

export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [first, second] = arcs;
  if (first === undefined || second === undefined || arcs.some((a) => !Number.isSafeInteger(a) || a < 0))
    throw new Error(`OID: bad ${dotted}`);
  const out: number[] = [];
  const encodeArc = (arc: number) => {
    const groups = [arc % 128];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) groups.unshift((n % 128) | 0x80);
    out.push(...groups);
  };
  encodeArc(first * 40 + second);
  for (const arc of arcs.slice(2)) encodeArc(arc);
  return tlv(TAG.oid, Buffer.from(out));
}

/** PrintableString when every character allows it (as @peculiar/x509 and OpenSSL choose), else UTF8String. */
export function directoryString(text: string): Buffer {
  return /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text)
    ? tlv(TAG.printableString, Buffer.from(text, 'ascii'))
    : tlv(TAG.utf8String, Buffer.from(text, 'utf8'));
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, always Z. */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  if (year < 1950 || year > 9999) throw new Error(`time: year ${year} cannot be written in a certificate`);
  return year < 2050
    ? tlv(TAG.utcTime, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(TAG.generalizedTime, Buffer.from(digits, 'ascii'));
}

/** Where one element sits in a buffer: its tag, and the bounds of the whole element and of its content. */
export interface Element {
  tag: number;
  start: number;
  contentStart: number;
  end: number;
}

/** Reads the element at `offset` (definite lengths only, as DER requires); throws on truncation. */
export function readElement(buf: Buffer, offset: number): Element {
  if (offset + 2 > buf.length) throw new Error('DER: truncated');
  const tag = buf.readUInt8(offset);
  let length = buf.readUInt8(offset + 1);
  let contentStart = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || contentStart + count > buf.length) throw new Error('DER: bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf.readUInt8(contentStart + i);
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > buf.length) throw new Error('DER: truncated');
  return { tag, start: offset, contentStart, end };
}

/** The elements directly inside a constructed element. */
export function childrenOf(buf: Buffer, parent: Element): Element[] {
  const out: Element[] = [];
  for (let at = parent.contentStart; at < parent.end; ) {
    const child = readElement(buf, at);
    out.push(child);
    at = child.end;
  }
  return out;
}
