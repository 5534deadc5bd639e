/**
 * The proxy's proof that etcd bounds its identity: one gRPC `KV/Range` of a prefix, keys only, limit 1, sent
 * as the proxy (its client certificate) on a fresh HTTP/2 connection. Written against node:http2 rather than
 * the etcd3 client: it is the proxy's only etcd call, and gRPC plus protobuf would double the memory of a
 * process that otherwise copies bytes.
 */
import { connect, constants } from 'node:http2';
import { prefixRange } from '../decide/etcd-auth.ts';

/** etcd refused the read (the wanted answer), served it, or could not be asked. */
export type Bound = 'bounded' | 'unbounded' | 'unknown';

export interface ProbeTarget {
  /** etcd's client URL, `https://host:port`. */
  url: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** gRPC status codes (google.golang.org/grpc/codes) the answer is read by. */
const GRPC_OK = '0';
const GRPC_PERMISSION_DENIED = '7';

/** A protobuf field: `tag` then the bytes (length-delimited) or a varint. */
function bytesField(field: number, value: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(value.length), value]);
}
function varintField(field: number, value: number): Buffer {
  return Buffer.concat([varint(field << 3), varint(value)]);
}
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

/** etcdserverpb.RangeRequest{key: 1, range_end: 2, limit: 3, keys_only: 8} of `prefix`, gRPC-framed. */
export function rangeRequestFrame(prefix: string): Buffer {
  const range = prefixRange(prefix);
  const message = Buffer.concat([
    bytesField(1, Buffer.from(range.key, 'latin1')),
    bytesField(2, Buffer.from(range.rangeEnd, 'latin1')),
    varintField(3, 1),
    varintField(8, 1),
  ]);
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** Asks etcd, as the certificate in `target`, for one key of `prefix`. */
export function probeBoundary(target: ProbeTarget, prefix: string, timeoutMs = 2_000): Promise<Bound> {
  return new Promise((resolve) => {
    let settled = false;
    const session = connect(target.url, { ca: target.ca, cert: target.cert, key: target.key });
    const done = (bound: Bound) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      resolve(bound);
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    session.on('error', () => done('unknown'));
    const req = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: '/etcdserverpb.KV/Range',
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
    });
    let status: string | undefined;
    const read = (headers: Record<string, unknown>) => {
      const s = headers['grpc-status'];
      if (typeof s === 'string') status = s;
    };
    // A refusal comes as a trailers-only answer (status in the headers), a served read with trailers.
    req.on('response', read);
    req.on('trailers', read);
    req.on('error', () => done('unknown'));
    req.on('data', () => undefined);
    req.on('end', () =>
      done(status === GRPC_PERMISSION_DENIED ? 'bounded' : status === GRPC_OK ? 'unbounded' : 'unknown'),
    );
    req.end(rangeRequestFrame(prefix));
  });
}
