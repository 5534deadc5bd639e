/**
 * The string formats a CRD schema can ask kube-apiserver to check (the list in JSONSchemaProps.format's
 * documentation). Unknown formats are ignored, as upstream does.
 */
import net from 'node:net';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
// RFC 3339 plus the reduced-precision and local-time variants kube-openapi's strfmt.ParseDateTime accepts.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const HOSTNAME =
  /^(?=.{1,255}$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAC = /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){7}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$/i;
const DURATION = /^(-?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const checkDateTime = (v: string) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T')));

const CHECKS: Record<string, (v: string) => boolean> = {
  'date-time': (v) => checkDateTime(v),
  datetime: (v) => checkDateTime(v),
  date: (v) => DATE.test(v) && !Number.isNaN(Date.parse(v)),
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID3.test(v),
  uuid4: (v) => UUID4.test(v),
  uuid5: (v) => UUID5.test(v),
  ipv4: (v) => net.isIPv4(v),
  ipv6: (v) => net.isIPv6(v),
  cidr: (v) => {
    const [ip = '', bits, extra] = v.split('/');
    if (extra !== undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
    const max = net.isIPv4(ip) ? 32 : net.isIPv6(ip) ? 128 : -1;
    return max >= 0 && Number(bits) <= max;
  },
  mac: (v) => MAC.test(v),
  hostname: (v) => HOSTNAME.test(v),
  email: (v) => EMAIL.test(v),
  uri: (v) => {
    try {
      return Boolean(new URL(v));
    } catch {
      return v.startsWith('/');
    }
  },
  duration: (v) => DURATION.test(v),
  byte: (v) => BASE64.test(v),
  bsonobjectid: (v) => /^[0-9a-f]{24}$/i.test(v),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
  rgbcolor: (v) => /^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$/.test(v),
  ssn: (v) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(v),
};

/** True when the value has the format, or the format is not one kube checks. */
export function validateFormat(format: string, value: string): boolean {
  const check = CHECKS[format];
  return check ? check(value) : true;
}
