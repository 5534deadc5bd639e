/**
 * `components.schemas` of a per-group-version OpenAPI v3 document, shaped like kube-apiserver's: built-in
 * kinds under their Go definition names with `$ref`s between named types (so `kubectl explain` prints
 * `<[]Container>` and kubectl's apply resolves patch strategies through the references), custom
 * resources under the reversed-group name kube uses (`io.openyurt.apps.v1beta1.NodePool`), and every
 * kind tagged with `x-kubernetes-group-version-kind`.
 */
import { builtinDefinitionName, builtinDefinitions } from './builtin.ts';
import type { StoredNode } from './generate/declarations-to-schemas.ts';
import type { SchemaNode } from './types.ts';

type Json = Record<string, unknown>;

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
export const OBJECT_META = `${META}.ObjectMeta`;
export const LIST_META = `${META}.ListMeta`;
export const STATUS = `${META}.Status`;
export const DELETE_OPTIONS = `${META}.DeleteOptions`;
export const PATCH = `${META}.Patch`;
export const WATCH_EVENT = `${META}.WatchEvent`;
export const SCALE = 'io.k8s.api.autoscaling.v1.Scale';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** Collects the components one document needs. */
export class ComponentSet {
  readonly schemas: Record<string, Json> = {};

  /** Adds a built-in definition and everything it references; returns its name. */
  addBuiltin(name: string): string {
    if (name in this.schemas) return name;
    const stored = builtinDefinitions().definitions[name];
    if (!stored) throw new Error(`no built-in definition ${name}`);
    this.schemas[name] = {}; // placeholder first: definitions can refer to themselves (JSONSchemaProps)
    this.schemas[name] = this.fromStored(stored);
    return name;
  }

  /** A built-in kind's component, or undefined when the kind is not built in. */
  addBuiltinKind(gvk: Gvk): string | undefined {
    const name = builtinDefinitionName(gvk.group, gvk.version, gvk.kind);
    if (!name) return undefined;
    this.addBuiltin(name);
    const schema = this.schemas[name];
    if (!schema) throw new Error(`component ${name} missing after addBuiltin`);
    tagGvk(schema, gvk);
    return name;
  }

  /** A custom resource kind from its resolved schema; metadata becomes a reference to ObjectMeta. */
  addCustomKind(gvk: Gvk, schema: SchemaNode | undefined): string {
    const name = customDefinitionName(gvk);
    const root: Json = {
      ...(structuredClone(schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Json),
    };
    const props = { ...((root.properties as Json | undefined) ?? {}) };
    this.addBuiltin(OBJECT_META);
    props.apiVersion = {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    };
    props.kind = {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    };
    props.metadata = { allOf: [ref(OBJECT_META)], description: "Standard object's metadata." };
    root.properties = props;
    root.type = 'object';
    tagGvk(root, gvk);
    this.schemas[name] = root;
    return name;
  }

  /** `<Kind>List` for a kind already added under `itemName`. */
  addList(gvk: Gvk, itemName: string): string {
    const name = `${itemName}List`;
    this.addBuiltin(LIST_META);
    const list: Json = {
      description: `${gvk.kind}List is a list of ${gvk.kind}.`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: {
          type: 'string',
          description: 'APIVersion defines the versioned schema of this representation of an object.',
        },
        items: { type: 'array', items: ref(itemName), description: `List of ${gvk.kind.toLowerCase()} objects.` },
        kind: {
          type: 'string',
          description: 'Kind is a string value representing the REST resource this object represents.',
        },
        metadata: { allOf: [ref(LIST_META)], default: {}, description: 'Standard list metadata.' },
      },
    };
    tagGvk(list, { ...gvk, kind: `${gvk.kind}List` });
    this.schemas[name] = list;
    return name;
  }

  /** Status, DeleteOptions, WatchEvent and Patch, which every document's operations refer to. */
  addCommon(): void {
    for (const name of [STATUS, DELETE_OPTIONS, WATCH_EVENT]) this.addBuiltin(name);
    this.schemas[PATCH] = {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    };
  }

  addScale(): string {
    this.addBuiltin(OBJECT_META);
    this.schemas[SCALE] = {
      description: 'Scale represents a scaling request for a resource.',
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { allOf: [ref(OBJECT_META)], default: {} },
        spec: { type: 'object', properties: { replicas: { type: 'integer', format: 'int32' } } },
        status: {
          type: 'object',
          required: ['replicas'],
          properties: { replicas: { type: 'integer', format: 'int32' }, selector: { type: 'string' } },
        },
      },
      'x-kubernetes-group-version-kind': [{ group: 'autoscaling', kind: 'Scale', version: 'v1' }],
    };
    return SCALE;
  }

  private fromStored(node: StoredNode): Json {
    if (node.$def) {
      const { $def, ...siblings } = node;
      this.addBuiltin($def);
      const rest = this.fromStored(siblings);
      return Object.keys(rest).length === 0 ? ref($def) : { allOf: [ref($def)], ...rest };
    }
    const out: Json = { ...node };
    if (node.properties) {
      out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, this.fromStored(v)]));
    }
    if (node.items) out.items = this.fromStored(node.items);
    if (node.additionalProperties && typeof node.additionalProperties === 'object') {
      out.additionalProperties = this.fromStored(node.additionalProperties);
    }
    return out;
  }
}

/** kube's definition name for a custom kind: the group reversed, then version and kind. */
export function customDefinitionName(gvk: Gvk): string {
  return [...gvk.group.split('.').reverse(), gvk.version, gvk.kind].join('.');
}

function tagGvk(schema: Json, gvk: Gvk): void {
  const entry = { group: gvk.group, kind: gvk.kind, version: gvk.version };
  const existing = (schema['x-kubernetes-group-version-kind'] as Gvk[] | undefined) ?? [];
  if (!existing.some((e) => e.group === entry.group && e.kind === entry.kind && e.version === entry.version)) {
    schema['x-kubernetes-group-version-kind'] = [...existing, entry];
  }
}
