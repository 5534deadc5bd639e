/**
 * The names in a certificate as node:crypto prints them, compared with the names we issue. Anything that
 * cannot be read unambiguously compares unequal: the caller then re-issues, which is always safe, whereas
 * a false "equal" would keep a certificate whose names are not what the pool needs.
 */
import { isIP, SocketAddress } from 'node:net';

/** One attribute of a distinguished name, in order: type (upper case) and unescaped value. */
export type Attribute = readonly [type: string, value: string];

/**
 * True when node's `subject` (one `TYPE=value` a line, RFC 2253 escaping, OpenSSL short names) names the
 * same ordered attributes as `expected` (`CN=a, OU=b, O=c`, the string form we issue with). Multi-valued
 * RDNs, quoted or hex (#...) values are not something we issue, so they compare unequal.
 */
export function sameSubject(nodeSubject: string | undefined, expected: string): boolean {
  const have = nodeSubject === undefined ? undefined : parseAttributes(nodeSubject.split('\n'));
  const want = distinguishedName(expected);
  return (
    have !== undefined &&
    want !== undefined &&
    have.length === want.length &&
    have.every(([t, v], i) => t === want[i]?.[0] && v === want[i]?.[1])
  );
}

/** The ordered attributes of a name in the string form we issue with (`CN=a, OU=b, O=c`); undefined if unreadable. */
export function distinguishedName(text: string): Attribute[] | undefined {
  return parseAttributes(splitUnescaped(text, ','));
}

function parseAttributes(parts: string[]): Attribute[] | undefined {
  if (parts.length === 0) return undefined;
  const out: Attribute[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const type = part.slice(0, eq).trim().toUpperCase();
    const value = unescapeValue(part.slice(eq + 1).trim());
    if (!/^[A-Z][A-Z0-9-]*$/.test(type) || value === undefined) return undefined;
    out.push([type, value]);
  }
  return out;
}

/** `s` split at every `sep` not escaped by a backslash. */
function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === sep) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  return [...parts, s.slice(start)];
}

/** RFC 4514 value unescaping (`\,` and `\2C` alike); undefined for forms we never issue or cannot read. */
function unescapeValue(raw: string): string | undefined {
  if (raw.startsWith('"') || raw.startsWith('#')) return undefined;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '+') return undefined; // unescaped only between the members of a multi-valued RDN
    if (c !== '\\') {
      out += c;
      continue;
    }
    const hex = /^[0-9A-Fa-f]{2}/.exec(raw.slice(i + 1));
    if (hex) {
      // Hex escapes are single bytes; multi-byte UTF-8 sequences are not something OpenSSL prints here.
      const code = parseInt(hex[0], 16);
      if (code > 0x7f) return undefined;
      out += String.fromCharCode(code);
      i += 2;
    } else if (i + 1 < raw.length) {
      out += raw[++i];
    } else {
      return undefined;
    }
  }
  return out;
}

/**
 * The SANs of node's `subjectAltName` (`DNS:a, IP Address:1.2.3.4`, values JSON-quoted when they hold
 * separators) as `dns:<name>` / `ip:<canonical address>` / `<type>:<value>`. A part that cannot be read
 * becomes `unreadable:<text>`, which matches nothing we want.
 */
export function subjectAltNames(text: string | undefined): string[] {
  const out: string[] = [];
  let i = 0;
  const s = text ?? '';
  while (i < s.length) {
    const colon = s.indexOf(':', i);
    if (colon < 0) return [...out, `unreadable:${s.slice(i)}`];
    const type = s.slice(i, colon);
    let value: string;
    if (s[colon + 1] === '"') {
      let j = colon + 2;
      while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      try {
        value = JSON.parse(s.slice(colon + 1, j + 1)) as string;
      } catch {
        return [...out, `unreadable:${s.slice(i)}`];
      }
      i = j + 1;
    } else {
      const end = s.indexOf(', ', colon + 1);
      value = s.slice(colon + 1, end < 0 ? s.length : end);
      i = end < 0 ? s.length : end;
    }
    if (s.startsWith(', ', i)) i += 2;
    else if (i < s.length) return [...out, `unreadable:${s.slice(i)}`];
    out.push(
      type === 'DNS'
        ? `dns:${value}`
        : type === 'IP Address'
          ? `ip:${canonicalIp(value) ?? value}`
          : `${type.toLowerCase()}:${value}`,
    );
  }
  return out;
}

/**
 * One spelling per address, so `::1`, `0:0:0:0:0:0:0:1` (how node prints IPv6 SANs) and `0::1` compare
 * equal: the address goes through inet_pton/inet_ntop. Undefined for anything that is not an IP address.
 */
export function canonicalIp(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  try {
    return new SocketAddress({ address, family: family === 6 ? 'ipv6' : 'ipv4' }).address;
  } catch {
    return undefined;
  }
}
