/** labelSelector / fieldSelector query parameters → one predicate; bad selectors are 400s. */
import { qualifiedResource, type ResourceInfo } from '../../registry.ts';
import { badRequest } from '../errors.ts';
import type { ApiObject } from '../objects.ts';
import { selectorsModule } from '../peers.ts';
import type { FieldSelector, LabelSelector } from '../../selectors.ts';

export type ObjectFilter = ((obj: ApiObject) => boolean) | undefined;

export function selectionFilter(info: ResourceInfo, query: URLSearchParams): ObjectFilter {
  const labelText = query.get('labelSelector') ?? '';
  const fieldText = query.get('fieldSelector') ?? '';
  if (!labelText && !fieldText) return undefined;
  let labelSel: LabelSelector | undefined;
  let fieldSel: FieldSelector | undefined;
  try {
    if (labelText) labelSel = selectorsModule.parseLabelSelector(labelText);
    if (fieldText) {
      fieldSel = selectorsModule.parseFieldSelector(fieldText, qualifiedResource(info), {
        namespaced: info.namespaced,
        selectableFields: info.selectableFields,
      });
    }
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  return (obj) =>
    (labelSel === undefined || selectorsModule.matchLabels(labelSel, obj.metadata?.labels)) &&
    (fieldSel === undefined || selectorsModule.matchFields(fieldSel, obj));
}
