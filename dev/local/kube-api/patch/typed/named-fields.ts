/**
 * Set.EnsureNamedFieldsAreMembers: a declared property on a path of the set counts as a member itself.
 * Pruning uses it so that a struct field the applier reached last time (e.g. `.spec.strategy`) can be
 * removed whole when nobody owns anything under it any more.
 */
import type { SchemaNode } from '../../schema/types.ts';
import type { FieldSet } from '../fieldpath/field-set.ts';
import { propertySchema } from '../schema-view.ts';
import { declaredFields, itemSchema } from './type-of.ts';

export function ensureNamedFieldsAreMembers(set: FieldSet, schema: SchemaNode | undefined): FieldSet {
  return set.withMembers<SchemaNode | undefined>((pe, member, s) => {
    if ('field' in pe) {
      const declared = declaredFields(s)?.[pe.field] !== undefined;
      return [member || declared, propertySchema(s, pe.field)];
    }
    return [member, itemSchema(s)];
  })(schema);
}
