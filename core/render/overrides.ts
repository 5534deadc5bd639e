import type { Operation } from 'fast-json-patch';
import type { KubeObject } from '../kube.ts';
import type { OverrideOp } from '../poolspirit/api.ts';
import type { FieldIssue } from '../poolspirit/resolved.ts';

/** A spec that validated field by field but cannot be rendered (an override that does not apply). */
export class SpecRenderError extends Error {
  readonly issues: FieldIssue[];
  constructor(issues: FieldIssue[]) {
    super(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
    this.name = 'SpecRenderError';
    this.issues = issues;
  }
}

/**
 * Applies spec.overrides to the rendered Deployment, in order, last of all. A pointer step `name=<x>`
 * selects the array element whose `name` is x, so `/spec/template/spec/containers/name=etcd/image` keeps
 * working whatever the container order. After every operation the pod template must still carry the
 * selector labels, or the Deployment would no longer own its pods.
 */
export async function applyOverrides(deployment: KubeObject, ops: readonly OverrideOp[]): Promise<KubeObject> {
  if (ops.length === 0) return deployment;
  // Loaded only for a PoolSpirit with overrides (~3 ms of every cold start otherwise; docs/deploy.md).
  const jsonPatch = (await import('fast-json-patch')).default;
  let doc = structuredClone(deployment);
  ops.forEach((op, i) => {
    const at = `spec.overrides[${i}]`;
    try {
      const resolved = { ...op, path: resolvePointer(doc, op.path, `${at}.path`) } as Operation;
      if (op.from !== undefined) (resolved as { from: string }).from = resolvePointer(doc, op.from, `${at}.from`);
      doc = jsonPatch.applyOperation(doc, resolved, true, true, false).newDocument;
    } catch (err) {
      if (err instanceof SpecRenderError) throw err;
      const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new SpecRenderError([{ field: at, message: `does not apply to the rendered Deployment: ${message}` }]);
    }
    const spec = doc.spec as {
      selector: { matchLabels: Record<string, string> };
      template?: { metadata?: { labels?: Record<string, string> } };
    };
    const labels = spec.template?.metadata?.labels ?? {};
    const lost = Object.entries(spec.selector.matchLabels).find(([k, v]) => labels[k] !== v);
    if (lost)
      throw new SpecRenderError([
        { field: at, message: `removes the pod label ${lost[0]}=${lost[1]} the Deployment selects its pods by` },
      ]);
  });
  return doc;
}

function resolvePointer(doc: unknown, pointer: string, field: string): string {
  const steps = pointer.split('/').slice(1);
  let node: unknown = doc;
  const out: string[] = [];
  for (const step of steps) {
    let token = step;
    if (Array.isArray(node) && step.startsWith('name=')) {
      const name = step.slice(5).replace(/~1/g, '/').replace(/~0/g, '~');
      const index = node.findIndex((e) => (e as { name?: string } | null)?.name === name);
      if (index < 0)
        throw new SpecRenderError([
          { field, message: `no element named "${name}" at ${['', ...out].join('/') || '/'}` },
        ]);
      token = String(index);
    }
    out.push(token);
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return `/${out.join('/')}`;
}
