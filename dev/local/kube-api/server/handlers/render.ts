/** Shapes an object or list for the negotiated output form (plain JSON, Table, PartialObjectMetadata). */
import { groupVersion, type ResourceInfo } from '../../registry.ts';
import type { ApiObject, JsonObject } from '../objects.ts';
import { tableModule } from '../peers.ts';
import type { OutputForm } from '../respond.ts';

/** What the Table printer needs to know about a resource. */
export function tableResource(info: ResourceInfo) {
  return {
    group: info.group,
    version: info.version,
    kind: info.kind,
    resource: info.resource,
    namespaced: info.namespaced,
    printerColumns: info.printerColumns,
  };
}

export function partial(obj: ApiObject): ApiObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function renderObject(info: ResourceInfo, form: OutputForm, obj: ApiObject): unknown {
  if (form.form === 'table') {
    return tableModule.toTable(tableResource(info), [obj], {
      includeObject: form.includeObject,
      resourceVersion: String(obj.metadata?.resourceVersion ?? ''),
    });
  }
  if (form.form === 'partial') return partial(obj);
  return obj;
}

export function renderList(
  info: ResourceInfo,
  form: OutputForm,
  items: ApiObject[],
  resourceVersion: string,
  cont?: string,
  remainingItemCount?: number,
): unknown {
  if (form.form === 'table') {
    return tableModule.toTable(tableResource(info), items, {
      includeObject: form.includeObject,
      resourceVersion,
      continue: cont,
      remainingItemCount,
    });
  }
  const metadata: JsonObject = { resourceVersion };
  if (cont) metadata.continue = cont;
  if (remainingItemCount !== undefined) metadata.remainingItemCount = remainingItemCount;
  if (form.form === 'partial') {
    return { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata, items: items.map(partial) };
  }
  // kube's typed lists encode items without kind/apiVersion; custom resource lists keep them.
  const listed = info.custom ? items : items.map(({ kind: _kind, apiVersion: _apiVersion, ...rest }) => rest);
  return { kind: info.listKind, apiVersion: groupVersion(info.group, info.version), metadata, items: listed };
}
