/** labelSelector / fieldSelector query parameters → one predicate; bad selectors are 400s. */
import { qualifiedResource, type ResourceInfo } from '../../registry.ts';
import type { FieldSelector, LabelSelector } from '../../selectors.ts';
import { badRequest } from '../errors.ts';
import type { ApiObject } from '../objects.ts';
import { selectorsModule } from '../peers.ts';

/**
 * The whole selector; `labels` is its label part alone, which storage may apply before decoding
 * (ListOptions.labelHint), and `labelsOnly` says there is no other part.
 */
export type ObjectFilter =
  | (((obj: ApiObject) => boolean) & {
      labels?: (labels: Record<string, string> | undefined) => boolean;
      labelsOnly?: boolean;
    })
  | undefined;

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
  const labels = labelSel && ((l: Record<string, string> | undefined) => selectorsModule.matchLabels(labelSel, l));
  const filter = (obj: ApiObject) =>
    (labels === undefined || labels(obj.metadata?.labels)) &&
    (fieldSel === undefined || selectorsModule.matchFields(fieldSel, obj));
  return labels ? Object.assign(filter, { labels, labelsOnly: fieldSel === undefined }) : filter;
}
