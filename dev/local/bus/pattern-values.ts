import { BlockList, isIP } from 'node:net';

/** A compiled `wildcard` value: literal segments separated by `*`. */
export interface Wildcard {
  source: string;
  segments: string[];
}

/**
 * Parses an EventBridge wildcard value. `*` matches any run of characters (including none); `\*` is a
 * literal asterisk and `\\` a literal backslash; any other escape and two consecutive `*` are rejected,
 * as EventBridge does. Returns an error message instead of throwing so the caller can name the path.
 */
export function parseWildcard(source: string): Wildcard | string {
  const segments: string[] = [''];
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') {
      const next = source[i + 1];
      if (next !== '*' && next !== '\\') {
        return `a backslash may only escape "*" or "\\" (position ${i})`;
      }
      segments[segments.length - 1] += next;
      i++;
    } else if (ch === '*') {
      if (source[i + 1] === '*') return `consecutive wildcard characters are not allowed (position ${i})`;
      segments.push('');
    } else {
      segments[segments.length - 1] += ch;
    }
  }
  return { source, segments };
}

/**
 * Glob match without regular expressions: the first segment anchors the start, the last the end, and the
 * middle ones are found left to right. Greedy-leftmost is correct for `*`-only globs and runs in linear
 * time, so a hostile pattern cannot make matching slow.
 */
export function wildcardMatches(w: Wildcard, value: string): boolean {
  const { segments } = w;
  if (segments.length === 1) return value === segments[0];
  const first = segments[0];
  const last = segments[segments.length - 1];
  if (value.length < first.length + last.length) return false;
  if (!value.startsWith(first) || !value.endsWith(last)) return false;
  let pos = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const found = value.indexOf(segments[i], pos);
    if (found < 0 || found + segments[i].length > end) return false;
    pos = found + segments[i].length;
  }
  return true;
}

/** A compiled `cidr` value. */
export interface Cidr {
  source: string;
  family: 'ipv4' | 'ipv6';
  list: BlockList;
}

/**
 * Parses `10.0.0.0/24` or `2001:db8::/32`; returns an error message when it is not a valid CIDR block.
 * Host bits set in the address are ignored (10.0.0.5/24 is 10.0.0.0/24); Event Ruler would start that
 * range at 10.0.0.5 instead.
 */
export function parseCidr(source: string, opts: { singleAddress?: boolean } = {}): Cidr | string {
  const slash = source.indexOf('/');
  if (slash < 0) return `"${source}" is not a CIDR block (expected address/prefix-length, e.g. 10.0.0.0/24)`;
  const address = source.slice(0, slash);
  const lengthText = source.slice(slash + 1);
  const version = isIP(address);
  if (version === 0) return `"${address}" is not an IPv4 or IPv6 address`;
  // Event Ruler refuses /32 and /128 as CIDR blocks: a single address is written as a plain value.
  const max = (version === 4 ? 32 : 128) - (opts.singleAddress ? 0 : 1);
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > max) {
    return `prefix length "${lengthText}" must be a whole number from 0 to ${max}`;
  }
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(address, Number(lengthText), family);
  return { source, family, list };
}

export function cidrContains(c: Cidr, value: string): boolean {
  const version = isIP(value);
  if (version === 0) return false;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  // BlockList maps IPv4 into IPv6 ranges itself; a v6 address never falls in a v4 block and vice versa here.
  if (family !== c.family) return false;
  return c.list.check(value, family);
}
