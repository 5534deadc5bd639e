import { describe, expect, it } from 'vitest';
import { applyJsonPatch, applyMergePatch, PatchError } from '../../../../../dev/local/kube-api/patch/index.ts';

describe('JSON merge patch (RFC 7386)', () => {
  it.each([
    {
      name: 'sets and replaces',
      target: { a: 1, b: { c: 1 } },
      patch: { a: 2, d: 'x' },
      result: { a: 2, b: { c: 1 }, d: 'x' },
    },
    {
      name: 'null deletes',
      target: { a: 1, b: { c: 1, d: 2 } },
      patch: { b: { c: null } },
      result: { a: 1, b: { d: 2 } },
    },
    { name: 'lists are replaced whole', target: { l: [1, 2, 3] }, patch: { l: [4] }, result: { l: [4] } },
    { name: 'an object replaces a scalar', target: { a: 1 }, patch: { a: { b: null, c: 1 } }, result: { a: { c: 1 } } },
    {
      name: 'RFC 7386 appendix example',
      target: {
        title: 'Goodbye!',
        author: { givenName: 'John', familyName: 'Doe' },
        tags: ['example', 'sample'],
        content: 'This will be unchanged',
      },
      patch: { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] },
      result: {
        title: 'Hello!',
        author: { givenName: 'John' },
        tags: ['example'],
        content: 'This will be unchanged',
        phoneNumber: '+01-123-456-7890',
      },
    },
  ])('$name', ({ target, patch, result }) => {
    const before = JSON.stringify(target);
    expect(applyMergePatch(target, patch)).toEqual(result);
    expect(JSON.stringify(target)).toBe(before);
  });

  it('a patch that is not an object is a 400', () => {
    expect(() => applyMergePatch({}, [1])).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { a: '1' } }, spec: { replicas: 1, list: ['x', 'y'] } };

  it.each([
    {
      op: { op: 'add', path: '/metadata/labels/b', value: '2' },
      check: (d: any) => expect(d.metadata.labels).toEqual({ a: '1', b: '2' }),
    },
    { op: { op: 'remove', path: '/spec/list/0' }, check: (d: any) => expect(d.spec.list).toEqual(['y']) },
    { op: { op: 'replace', path: '/spec/replicas', value: 3 }, check: (d: any) => expect(d.spec.replicas).toBe(3) },
    {
      op: { op: 'move', from: '/spec/list', path: '/spec/moved' },
      check: (d: any) => expect(d.spec).toEqual({ replicas: 1, moved: ['x', 'y'] }),
    },
    {
      op: { op: 'copy', from: '/metadata/labels', path: '/spec/labels' },
      check: (d: any) => expect(d.spec.labels).toEqual({ a: '1' }),
    },
    {
      op: { op: 'add', path: '/spec/list/-', value: 'z' },
      check: (d: any) => expect(d.spec.list).toEqual(['x', 'y', 'z']),
    },
  ])('$op.op $op.path', ({ op, check }) => {
    check(applyJsonPatch(doc, [{ op: 'test', path: '/spec/replicas', value: 1 }, op]));
    expect(doc.spec.replicas).toBe(1);
  });

  it.each([
    { name: 'a failed test', ops: [{ op: 'test', path: '/spec/replicas', value: 2 }] },
    { name: 'replacing a missing path', ops: [{ op: 'replace', path: '/spec/nope', value: 2 }] },
    { name: 'removing a missing path', ops: [{ op: 'remove', path: '/metadata/annotations' }] },
    { name: 'adding under a missing parent', ops: [{ op: 'add', path: '/a/b/c', value: 1 }] },
    { name: 'an unknown op', ops: [{ op: 'frobnicate', path: '/spec' }] },
  ])("$name is 422 with kube-apiserver's generic message", ({ ops }) => {
    let err: unknown;
    try {
      applyJsonPatch(doc, ops);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PatchError);
    expect(err).toMatchObject({
      status: 422,
      message: 'the server rejected our request due to an error in our request',
    });
    expect(String((err as Error).cause)).not.toContain('replicas'); // the document never leaks into the cause
  });

  it('a body that is not a list of operations is a 400', () => {
    expect(() => applyJsonPatch(doc, { op: 'add' })).toThrow(
      expect.objectContaining({
        status: 400,
        message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      }),
    );
    expect(() => applyJsonPatch(doc, ['add'])).toThrow(expect.objectContaining({ status: 400 }));
  });
});
