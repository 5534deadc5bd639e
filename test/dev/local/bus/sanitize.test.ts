import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_LENGTH, sanitizeError } from '../../../../dev/local/bus/sanitize.ts';

// A real key, made at test time (never committed): the sanitizer must redact whatever a PEM block holds.
const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const pemBody = pem.split('\n')[1];

describe('sanitizeError (what the dead-letter store keeps)', () => {
  it.each([
    ['a PEM block', new Error(`bad key ${pem} here`), pemBody],
    ['a bearer token', new Error('401 for Authorization: Bearer abc.def.ghi'), 'abc.def.ghi'],
    ['an access key id', 'denied for AKIAABCDEFGHIJKLMNOP', 'AKIAABCDEFGHIJKLMNOP'],
    [
      'a presigned URL signature',
      'GET https://sts.amazonaws.com/?X-Amz-Signature=deadbeef01&X-Amz-Credential=AKID',
      'deadbeef01',
    ],
    ['a password assignment', { message: 'x', detail: 'password=hunter2' }, 'hunter2'],
    ['an EKS token', 'token k8s-aws-v1.aHR0cHM6Ly9zdHM rejected', 'aHR0cHM6Ly9zdHM'],
    ['a long opaque blob', `client-certificate-data ${'QUJD'.repeat(40)}`, 'QUJDQUJD'],
  ])('removes %s', (_what, input, secret) => {
    const out = sanitizeError(input);
    expect(out).not.toContain(secret);
    expect(out).toMatch(/redacted/);
  });

  it('keeps the message, drops stack frames and bounds the length', () => {
    const err = new TypeError('cannot read spec');
    expect(sanitizeError(err)).toBe('TypeError: cannot read spec');
    expect(sanitizeError(new Error(`boom\n    at f (a.ts:1:1)\n    at g (b.ts:2:2)`))).toBe('boom');
    expect(sanitizeError('x'.repeat(5000)).length).toBeLessThan(MAX_ERROR_LENGTH + 20);
  });
});
