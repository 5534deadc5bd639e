import type { OverrideOp } from './api.ts';
import type { FieldIssue } from './resolved.ts';

/**
 * Where overrides may write in the rendered Deployment. The pod template is open (that is what custom
 * component implementations need: images, commands, extra containers, volumes); the parts the reconciler
 * relies on to find, own and roll the workload are not.
 */
const ALLOWED_ROOTS = [
  '/spec/template',
  '/metadata/labels',
  '/metadata/annotations',
  '/spec/minReadySeconds',
  '/spec/progressDeadlineSeconds',
  '/spec/revisionHistoryLimit',
];
const WHY_NOT: Array<[string, string]> = [
  ['/spec/selector', 'the selector is how pool-spirit finds its pods'],
  ['/spec/replicas', 'a pool-spirit always runs one pod (single-member in-memory etcd)'],
  ['/spec/strategy', 'Recreate is required: two pods would each elect YurtHub leaders'],
  ['/metadata/name', 'the name is derived from the pool'],
  ['/metadata/namespace', 'the namespace is the product namespace'],
  ['/metadata/ownerReferences', 'ownership makes deletion cascade from the NodePool'],
];

export function validateOverridePaths(ops: readonly OverrideOp[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  ops.forEach((op, i) => {
    const at = `spec.overrides[${i}]`;
    for (const [key, pointer] of [
      ['path', op.path],
      ['from', op.from],
    ] as const) {
      if (pointer === undefined) continue;
      if (!pointer.startsWith('/')) {
        issues.push({ field: `${at}.${key}`, message: `"${pointer}" is not a JSON pointer (it must start with /)` });
        continue;
      }
      const forbidden = WHY_NOT.find(([root]) => pointer === root || pointer.startsWith(`${root}/`));
      if (forbidden) {
        issues.push({ field: `${at}.${key}`, message: `${pointer} cannot be overridden: ${forbidden[1]}` });
      } else if (!ALLOWED_ROOTS.some((root) => pointer === root || pointer.startsWith(`${root}/`))) {
        issues.push({
          field: `${at}.${key}`,
          message: `${pointer} is outside what overrides may change (${ALLOWED_ROOTS.join(', ')})`,
        });
      }
    }
    if ((op.op === 'add' || op.op === 'replace' || op.op === 'test') && !('value' in op)) {
      issues.push({ field: `${at}.value`, message: `required for op ${op.op}` });
    }
    if ((op.op === 'move' || op.op === 'copy') && op.from === undefined) {
      issues.push({ field: `${at}.from`, message: `required for op ${op.op}` });
    }
    if (op.path === '/spec/template' && (op.op === 'remove' || op.op === 'replace')) {
      issues.push({
        field: `${at}.path`,
        message: 'the whole pod template cannot be replaced or removed; patch inside it',
      });
    }
  });
  return issues;
}
