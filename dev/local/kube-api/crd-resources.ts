/**
 * A CustomResourceDefinition → the resources it serves (one ResourceInfo per served version) and the
 * status kube's apiextensions controllers would give it (NamesAccepted, Established, acceptedNames).
 */
import type {
  CustomResourceDefinitionCondition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionSpec,
  CustomResourceDefinitionStatus,
} from 'kubernetes-types/apiextensions/v1.js';
import type { ApiObject } from './api-object.ts';
import { makeResourceInfo, type PrinterColumn, type ResourceInfo } from './registry.ts';
import type { SchemaNode } from './schema/types.ts';

/** A stored CustomResourceDefinition (validated on write), read through kube's types. */
type Crd = ApiObject;
const specOf = (crd: Crd) => crd.spec as CustomResourceDefinitionSpec | undefined;
const statusOf = (crd: Crd) => crd.status as CustomResourceDefinitionStatus | undefined;

/** The order apiextensions-apiserver's discovery lists a custom resource's verbs in. */
const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
type CrdSchemaLookup = (crd: Crd, version: string) => SchemaNode | undefined;

export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export function acceptedNames(crd: Crd): Record<string, unknown> {
  const names: Partial<CustomResourceDefinitionNames> = specOf(crd)?.names ?? {};
  const out: Record<string, unknown> = {
    plural: names.plural,
    singular: names.singular || String(names.kind ?? '').toLowerCase(),
    kind: names.kind,
    listKind: names.listKind || `${names.kind}List`,
  };
  if (names.shortNames?.length) out.shortNames = names.shortNames;
  if (names.categories?.length) out.categories = names.categories;
  return out;
}

function storageVersion(crd: Crd): string | undefined {
  const versions = specOf(crd)?.versions ?? [];
  return (versions.find((v) => v.storage) ?? versions[0])?.name;
}

/** Default printer column kube adds when a version declares none: Age from creationTimestamp. */
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export function crdResources(crd: Crd, schemaFor: CrdSchemaLookup): ResourceInfo[] {
  const names = acceptedNames(crd);
  const stored = storageVersion(crd);
  const spec = specOf(crd);
  if (!spec) return []; // no versions to serve
  return (spec.versions ?? [])
    .filter((v) => v.served)
    .map((v) => {
      let cached: SchemaNode | undefined | null = null;
      return makeResourceInfo({
        group: spec.group,
        version: v.name,
        resource: String(names.plural),
        kind: String(names.kind),
        listKind: String(names.listKind),
        singular: String(names.singular),
        namespaced: spec.scope === 'Namespaced',
        shortNames: (names.shortNames as string[] | undefined) ?? [],
        categories: (names.categories as string[] | undefined) ?? [],
        verbs: CR_VERBS,
        subresources: { status: Boolean(v.subresources?.status), scale: v.subresources?.scale ?? undefined },
        storageVersion: stored,
        custom: true,
        tracksGeneration: true,
        printerColumns: v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : [AGE_COLUMN],
        selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath),
        crdName: crd.metadata?.name,
        schema: () => {
          if (cached === null) cached = schemaFor(crd, v.name);
          return cached;
        },
      });
    });
}

function condition(
  type: string,
  reason: string,
  message: string,
  prev: CustomResourceDefinitionCondition[] | undefined,
  now: string,
  status = 'True',
) {
  const old = prev?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === status ? old.lastTransitionTime : now;
  return { type, status, lastTransitionTime, reason, message };
}

/** The status the apiextensions controllers converge a served CRD to. */
export function establishedStatus(crd: Crd, now: string): Record<string, unknown> {
  const prev = statusOf(crd)?.conditions;
  const stored = new Set<string | undefined>(statusOf(crd)?.storedVersions ?? []);
  stored.add(storageVersion(crd));
  return {
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found', prev, now),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted', prev, now),
    ],
    acceptedNames: acceptedNames(crd),
    storedVersions: [...stored],
  };
}

/** Status while a CRD's instances are being removed. */
export function terminatingStatus(crd: Crd, now: string): Record<string, unknown> {
  const base = establishedStatus(crd, now);
  const prev = statusOf(crd)?.conditions;
  (base.conditions as unknown[]).push(
    condition('Terminating', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress', prev, now),
  );
  return base;
}
