import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../../dev/local/kube-api/server/errors.ts';

describe('ApiError', () => {
  it('captures no stack for a 4xx answer, keeps one for a 5xx, and leaves the stack limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const notFound = new ApiError(404, 'NotFound', 'configmaps "x" not found');
    expect(notFound.stack).toBe('ApiError: configmaps "x" not found');
    expect(Error.stackTraceLimit).toBe(limit);
    const internal = new ApiError(500, 'InternalError', 'storage failed');
    expect(internal.stack).toMatch(/^ApiError: storage failed\n\s+at /);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(notFound.status()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });
});
