/**
 * What the agent applies from the bootstrap ConfigMap, and in which order. Pure: the ConfigMap in, the
 * manifests and their hashes out.
 */
import { parseAllDocuments } from 'yaml';
import * as z from 'zod';
import { stableHash } from '../../core/hash.ts';
import type { KubeObject } from '../../core/kube.ts';
import { BOOTSTRAP_HASH_ANNOTATION, BOOTSTRAP_MANIFESTS_KEY } from '../../core/render/bootstrap.ts';

const ManifestSchema = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }),
});

export interface BootstrapContent {
  manifests: KubeObject[];
  /** Hash of the manifests as parsed: what the agent reports as applied, whatever the annotation says. */
  contentHash: string;
  /** The ConfigMap's hash annotation, if any. */
  annotationHash?: string;
}

export class BootstrapContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BootstrapContentError';
  }
}

interface ConfigMapLike {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/**
 * Parses `data["manifests.yaml"]` (YAML documents). The reported hash is computed from the content: the
 * reconciler hashes the same objects the same way, so a ConfigMap whose annotation was edited by hand is
 * reported as what it really holds, and the reconciler's Bootstrapped check sees the difference.
 */
export function parseBootstrapConfigMap(cm: ConfigMapLike): BootstrapContent {
  const where = `ConfigMap ${cm.metadata?.namespace ?? '?'}/${cm.metadata?.name ?? '?'}`;
  const text = cm.data?.[BOOTSTRAP_MANIFESTS_KEY];
  if (typeof text !== 'string') throw new BootstrapContentError(`${where}: data.${BOOTSTRAP_MANIFESTS_KEY} is missing`);
  const manifests: KubeObject[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    const [yamlError] = doc.errors;
    if (yamlError)
      throw new BootstrapContentError(`${where}: document ${i + 1} is not valid YAML: ${yamlError.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return; // an empty document (e.g. a trailing ---)
    const parsed = ManifestSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BootstrapContentError(
        `${where}: document ${i + 1}: ${issue?.path.join('.') || '(root)'} ${issue?.message ?? 'is invalid'}`,
      );
    }
    manifests.push(parsed.data as KubeObject);
  });
  return {
    manifests,
    contentHash: stableHash(manifests),
    annotationHash: cm.metadata?.annotations?.[BOOTSTRAP_HASH_ANNOTATION],
  };
}

/** The identity of a bootstrap: changes to either the content or the annotation mean "apply again". */
export function bootstrapIdentity(content: BootstrapContent): string {
  return `${content.contentHash}/${content.annotationHash ?? ''}`;
}

/**
 * Apply order: Namespaces, then CRDs (everything else may live in the one or be a kind of the other), then,
 * once the CRDs are Established, the rest; the ConfigMap's order within each group.
 */
export function applyPhases(manifests: readonly KubeObject[]): { foundation: KubeObject[]; rest: KubeObject[] } {
  return {
    foundation: [
      ...manifests.filter((m) => m.kind === 'Namespace'),
      ...manifests.filter((m) => m.kind === 'CustomResourceDefinition'),
    ],
    rest: manifests.filter((m) => m.kind !== 'Namespace' && m.kind !== 'CustomResourceDefinition'),
  };
}

export function isCrd(obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' && obj.apiVersion.startsWith('apiextensions.k8s.io/');
}

/** Whether a CRD as read back from the apiserver serves its resource yet. */
export function crdEstablished(
  crd: { status?: { conditions?: Array<{ type?: string; status?: string }> } } | undefined,
): boolean {
  return (crd?.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
}

/** `kind namespace/name` for logs and errors. */
export function describeObject(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
}
