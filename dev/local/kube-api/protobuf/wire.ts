/** Protocol Buffers wire format reading: just what decoding kube objects and file descriptors needs. */

/** Malformed protobuf input. */
export class ProtobufDecodeError extends Error {}

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

export class ProtoReader {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  /** Unsigned varint as a bigint (int64 fields may exceed 2^53). */
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new ProtobufDecodeError('truncated varint');
      const b = this.buf[this.pos++] ?? 0; // pos < end; past the buffer, undefined & n was 0 too
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new ProtobufDecodeError('varint too long');
    }
  }

  tag(): { field: number; wire: number } {
    const t = Number(this.varint());
    return { field: t >>> 3, wire: t & 7 };
  }

  bytes(): Uint8Array {
    const len = Number(this.varint());
    if (this.pos + len > this.end) throw new ProtobufDecodeError('truncated length-delimited field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  fixed(size: 4 | 8): Uint8Array {
    if (this.pos + size > this.end) throw new ProtobufDecodeError('truncated fixed field');
    const out = this.buf.subarray(this.pos, this.pos + size);
    this.pos += size;
    return out;
  }

  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_I64) this.fixed(8);
    else if (wire === WIRE_LEN) this.bytes();
    else if (wire === WIRE_I32) this.fixed(4);
    else throw new ProtobufDecodeError(`unsupported wire type ${wire}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
export function utf8String(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProtobufDecodeError('string field is not valid UTF-8');
  }
}
