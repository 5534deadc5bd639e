/**
 * Updater.prune: after an apply, remove what the applier set last time and no longer sets, unless some
 * manager (the applier's new configuration included) still owns it. Equivalent to SMD's three passes
 * (remove last set, add back owned items, add back dangling items): a node goes when it was in the
 * applier's previous set and is in nobody's set now, with struct fields counted as members of every set
 * that reaches below them.
 */
import type { SchemaNode } from '../../schema/types.ts';
import type { FieldSet } from '../fieldpath/field-set.ts';
import type { PathElement } from '../fieldpath/path-element.ts';
import type { JsonObject } from '../types.ts';
import { ensureNamedFieldsAreMembers } from './named-fields.ts';
import { removeWith } from './remove.ts';

interface PruneState {
  last: FieldSet;
  owned: FieldSet;
}

export function prune(merged: JsonObject, lastSet: FieldSet, owned: FieldSet, schema: SchemaNode): JsonObject {
  const state: PruneState = {
    last: ensureNamedFieldsAreMembers(lastSet, schema),
    owned: ensureNamedFieldsAreMembers(owned, schema),
  };
  const rule = (s: PruneState, pe: PathElement) => {
    if (s.last.has([pe]) && !s.owned.has([pe])) return 'remove' as const;
    return s.last.withPrefix(pe).isEmpty() ? ('keep' as const) : ('descend' as const);
  };
  const descend = (s: PruneState, pe: PathElement): PruneState => ({
    last: s.last.withPrefix(pe),
    owned: s.owned.withPrefix(pe),
  });
  return (removeWith(merged, state, schema, rule, descend) as JsonObject | undefined) ?? {};
}
