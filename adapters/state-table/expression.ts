/**
 * A tiny builder for UpdateItem expressions so the lease and the reconcile state can compose one
 * conditional write out of several concerns (lease, dedupe, outcome) without string juggling.
 */
export interface UpdateParts {
  set: string[];
  remove: string[];
  add: string[];
  conditions: string[];
  names: Record<string, string>;
  values: Record<string, unknown>;
}

export function emptyParts(): UpdateParts {
  return { set: [], remove: [], add: [], conditions: [], names: {}, values: {} };
}

export function mergeParts(...all: UpdateParts[]): UpdateParts {
  const out = emptyParts();
  for (const p of all) {
    out.set.push(...p.set);
    out.remove.push(...p.remove);
    out.add.push(...p.add);
    out.conditions.push(...p.conditions);
    Object.assign(out.names, p.names);
    Object.assign(out.values, p.values);
  }
  return out;
}

/** `SET #a = :a` for every defined entry; `REMOVE #a` for entries that are explicitly `null`. */
export function setAttributes(attrs: Record<string, unknown>): UpdateParts {
  const parts = emptyParts();
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined) continue;
    parts.names[`#${name}`] = name;
    if (value === null) {
      parts.remove.push(`#${name}`);
    } else {
      parts.set.push(`#${name} = :${name}`);
      parts.values[`:${name}`] = value;
    }
  }
  return parts;
}

export function renderUpdate(parts: UpdateParts): {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  const clauses: string[] = [];
  if (parts.set.length) clauses.push(`SET ${parts.set.join(', ')}`);
  if (parts.remove.length) clauses.push(`REMOVE ${parts.remove.join(', ')}`);
  if (parts.add.length) clauses.push(`ADD ${parts.add.join(', ')}`);
  return {
    UpdateExpression: clauses.join(' '),
    ConditionExpression: parts.conditions.length ? parts.conditions.map((c) => `(${c})`).join(' AND ') : undefined,
    ExpressionAttributeNames: Object.keys(parts.names).length ? parts.names : undefined,
    ExpressionAttributeValues: Object.keys(parts.values).length ? parts.values : undefined,
  };
}
