/**
 * Protobuf message definitions of the built-in kinds, extracted from kubectl 1.32 by
 * generate-descriptors.ts. Field names in Kubernetes' generated.proto are the JSON field names.
 */
import { readFileSync } from 'node:fs';

/** [jsonName, scalar type or 'message', repeated (1) or not (0), message type name] */
export type FieldDef = [
  name: string,
  type:
    | 'double'
    | 'float'
    | 'int64'
    | 'uint64'
    | 'int32'
    | 'fixed64'
    | 'fixed32'
    | 'bool'
    | 'string'
    | 'message'
    | 'bytes'
    | 'uint32'
    | 'sfixed32'
    | 'sfixed64'
    | 'sint32'
    | 'sint64',
  repeated: 0 | 1,
  typeName?: string,
];

export interface MessageDef {
  fields: Record<string, FieldDef>;
  /** A map<K,V> entry: field 1 key, field 2 value. */
  map?: true;
}

export type Descriptors = Record<string, MessageDef>;

let loaded: Descriptors | undefined;
export function descriptors(): Descriptors {
  loaded ??= JSON.parse(readFileSync(new URL('./descriptors.json', import.meta.url), 'utf8')) as Descriptors;
  return loaded;
}
