/**
 * Turns the `kubernetes-types` declarations (k8s 1.30) into structural OpenAPI schemas with the TypeScript
 * compiler API. Named Go types stay named: each becomes one definition, and a use of it is the internal
 * reference `{ "$def": "io.k8s.api.core.v1.PodSpec" }`. That keeps the committed file small, lets the
 * OpenAPI documents use the same component names as kube-apiserver, and handles recursive types
 * (JSONSchemaProps); `schema/builtin.ts` resolves the references into plain SchemaNodes.
 */
import path from 'node:path';
import ts from 'typescript';
import type { SchemaNode } from '../types.ts';
import {
  ATOMIC_MAPS,
  ATOMIC_STRUCTS,
  FLOAT64_FIELDS,
  INT64_FIELDS,
  LIST_TAGS,
  SUPPLEMENTED_FIELDS,
} from './upstream-tags.ts';

/** A schema node as stored: a SchemaNode that may instead name a definition. */
export type StoredNode = Omit<SchemaNode, 'properties' | 'items' | 'additionalProperties'> & {
  $def?: string;
  properties?: Record<string, StoredNode>;
  items?: StoredNode;
  additionalProperties?: StoredNode | boolean;
};

export interface GeneratedSchemas {
  source: string;
  /** `<group or "core">/<version>/<Kind>` → definition name. */
  kinds: Record<string, string>;
  definitions: Record<string, StoredNode>;
}

/** kubernetes-types module → the Go package prefix kube-apiserver uses for OpenAPI definition names. */
const MODULE_PREFIXES: Record<string, string> = {
  'core/v1': 'io.k8s.api.core.v1',
  'apps/v1': 'io.k8s.api.apps.v1',
  'rbac/v1': 'io.k8s.api.rbac.v1',
  'coordination/v1': 'io.k8s.api.coordination.v1',
  'discovery/v1': 'io.k8s.api.discovery.v1',
  'networking/v1': 'io.k8s.api.networking.v1',
  'apiextensions/v1': 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
  'meta/v1': 'io.k8s.apimachinery.pkg.apis.meta.v1',
  runtime: 'io.k8s.apimachinery.pkg.runtime',
  'api/resource': 'io.k8s.apimachinery.pkg.api.resource',
};

const ROOT_KINDS: Array<[group: string, version: string, kind: string, module: string]> = [
  ['', 'v1', 'Namespace', 'core/v1'],
  ['', 'v1', 'Node', 'core/v1'],
  ['', 'v1', 'Pod', 'core/v1'],
  ['', 'v1', 'Service', 'core/v1'],
  ['', 'v1', 'Secret', 'core/v1'],
  ['', 'v1', 'ConfigMap', 'core/v1'],
  ['', 'v1', 'ServiceAccount', 'core/v1'],
  ['', 'v1', 'Event', 'core/v1'],
  ['', 'v1', 'Endpoints', 'core/v1'],
  ['discovery.k8s.io', 'v1', 'EndpointSlice', 'discovery/v1'],
  ['networking.k8s.io', 'v1', 'NetworkPolicy', 'networking/v1'],
  ['apps', 'v1', 'Deployment', 'apps/v1'],
  ['rbac.authorization.k8s.io', 'v1', 'Role', 'rbac/v1'],
  ['rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rbac/v1'],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'rbac/v1'],
  ['rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'rbac/v1'],
  ['coordination.k8s.io', 'v1', 'Lease', 'coordination/v1'],
  ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'apiextensions/v1'],
  ['meta.k8s.io', 'v1', 'Status', 'meta/v1'],
  ['meta.k8s.io', 'v1', 'DeleteOptions', 'meta/v1'],
  ['meta.k8s.io', 'v1', 'ObjectMeta', 'meta/v1'],
  ['meta.k8s.io', 'v1', 'ListMeta', 'meta/v1'],
  ['meta.k8s.io', 'v1', 'WatchEvent', 'meta/v1'],
];

/** Types whose JSON is free-form: upstream gives them a custom OpenAPI type instead of their Go fields. */
const FREE_FORM: Record<string, StoredNode> = {
  RawExtension: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  FieldsV1: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  Patch: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  JSON: { 'x-kubernetes-preserve-unknown-fields': true },
  JSONSchemaPropsOrArray: { 'x-kubernetes-preserve-unknown-fields': true },
  JSONSchemaPropsOrBool: { 'x-kubernetes-preserve-unknown-fields': true },
  JSONSchemaPropsOrStringArray: { 'x-kubernetes-preserve-unknown-fields': true },
};

/**
 * Named scalar types: they keep their own definitions (kubectl explain prints `<Time>`, `<Quantity>`,
 * `<IntOrString>`), resolved to the scalar schema wherever SchemaNodes are handed out.
 */
const SCALAR_DEFINITIONS: Record<string, [name: string, node: StoredNode]> = {
  Time: [
    'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
    {
      type: 'string',
      format: 'date-time',
      description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.',
    },
  ],
  MicroTime: [
    'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
    {
      type: 'string',
      format: 'date-time',
      description: 'MicroTime is version of Time with microsecond level precision.',
    },
  ],
  // Quantity accepts numbers too (`cpu: 0.5`), so it is int-or-string with its own format.
  Quantity: [
    'io.k8s.apimachinery.pkg.api.resource.Quantity',
    {
      'x-kubernetes-int-or-string': true,
      format: 'quantity',
      description: 'Quantity is a fixed-point representation of a number.',
    },
  ],
  IntOrString: [
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    { 'x-kubernetes-int-or-string': true, description: 'IntOrString is a type that can hold an int32 or a string.' },
  ],
};

export function generateBuiltinSchemas(typesDir: string): GeneratedSchemas {
  const moduleOf = new Map<string, string>();
  const files = Object.keys(MODULE_PREFIXES).map((m) => {
    const file = path.resolve(typesDir, `${m}.d.ts`);
    moduleOf.set(file, m);
    return file;
  });
  const program = ts.createProgram(files, { noEmit: true, strict: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const generator = new DefinitionBuilder(checker, (file) => moduleOf.get(path.resolve(file)));

  const kinds: Record<string, string> = {};
  for (const [group, version, kind, module] of ROOT_KINDS) {
    const file = program.getSourceFile(path.resolve(typesDir, `${module}.d.ts`));
    const decl = file?.statements.find(
      (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === kind,
    );
    if (!decl) throw new Error(`kubernetes-types has no ${module} ${kind}`);
    kinds[`${group || 'core'}/${version}/${kind}`] = generator.define(decl);
  }
  const version = (JSON.parse(ts.sys.readFile(path.join(typesDir, 'package.json')) ?? '{}') as { version?: string })
    .version;
  return {
    source: `kubernetes-types ${version}`,
    kinds: sortKeys(kinds),
    definitions: sortKeys(generator.definitions),
  };
}

class DefinitionBuilder {
  readonly definitions: Record<string, StoredNode> = {};
  private readonly checker: ts.TypeChecker;
  private readonly moduleOfFile: (file: string) => string | undefined;

  constructor(checker: ts.TypeChecker, moduleOfFile: (file: string) => string | undefined) {
    this.checker = checker;
    this.moduleOfFile = moduleOfFile;
  }

  /** Adds the interface (and everything it references) and returns its definition name. */
  define(decl: ts.InterfaceDeclaration): string {
    const name = this.definitionName(decl);
    if (name in this.definitions) return name;
    const node: StoredNode = { type: 'object' };
    this.definitions[name] = node; // registered first so recursive references terminate
    const description = this.describe(decl.name);
    if (description) node.description = description;

    const members = decl.members.filter(ts.isPropertySignature).sort((a, b) => propName(a).localeCompare(propName(b)));
    const properties: Record<string, StoredNode> = {};
    const required: string[] = [];
    const owner = decl.name.text;
    for (const member of members) {
      const field = propName(member);
      if (!member.type) continue;
      const child = this.fieldNode(this.convert(member.type, owner, field), owner, field);
      const doc = this.describe(member.name);
      if (doc) child.description = doc;
      properties[field] = child;
      if (!member.questionToken) required.push(field);
    }
    for (const [field, extra] of Object.entries(SUPPLEMENTED_FIELDS[owner] ?? {})) {
      let child: StoredNode;
      if (extra.kind === 'ref-list')
        child = { type: 'array', items: { $def: this.define(this.findSibling(decl, extra.ref)) } };
      else if (extra.kind === 'string-list') child = { type: 'array', items: { type: 'string' } };
      else child = { type: extra.kind };
      properties[field] = this.fieldNode({ ...child, description: extra.description }, owner, field);
    }
    if (Object.keys(properties).length > 0) node.properties = sortKeys(properties);
    if (required.length > 0) node.required = required;
    if (ATOMIC_STRUCTS.has(owner)) node['x-kubernetes-map-type'] = 'atomic';
    return name;
  }

  private convert(typeNode: ts.TypeNode, owner: string, field: string): StoredNode {
    switch (typeNode.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.NumberKeyword:
        return numberNode(owner, field);
    }
    if (ts.isLiteralTypeNode(typeNode)) return { type: 'string' };
    if (ts.isParenthesizedTypeNode(typeNode)) return this.convert(typeNode.type, owner, field);
    if (ts.isArrayTypeNode(typeNode)) return { type: 'array', items: this.convert(typeNode.elementType, owner, field) };
    if (ts.isUnionTypeNode(typeNode)) {
      const kinds = new Set(typeNode.types.map((t) => t.kind));
      if (kinds.has(ts.SyntaxKind.NumberKeyword) && kinds.has(ts.SyntaxKind.StringKeyword))
        return this.scalar('IntOrString');
      return { 'x-kubernetes-preserve-unknown-fields': true };
    }
    if (ts.isTypeLiteralNode(typeNode)) {
      const index = typeNode.members.find(ts.isIndexSignatureDeclaration);
      if (!index) throw new Error(`${owner}.${field}: unsupported inline object type`);
      return { type: 'object', additionalProperties: this.convert(index.type, owner, field) };
    }
    if (ts.isTypeReferenceNode(typeNode)) {
      const refName = typeNode.typeName.getText();
      const itemType = typeNode.typeArguments?.length === 1 ? typeNode.typeArguments[0] : undefined;
      if (refName === 'Array' && itemType) {
        return { type: 'array', items: this.convert(itemType, owner, field) };
      }
      if (refName in SCALAR_DEFINITIONS) return this.scalar(refName);
      if (refName in FREE_FORM) return { ...FREE_FORM[refName] };
      const decl = this.resolve(typeNode.typeName);
      if (ts.isTypeAliasDeclaration(decl)) return this.convert(decl.type, owner, field);
      if (ts.isInterfaceDeclaration(decl)) return { $def: this.define(decl) };
    }
    throw new Error(`${owner}.${field}: unsupported type ${ts.SyntaxKind[typeNode.kind]} (${typeNode.getText()})`);
  }

  private scalar(alias: string): StoredNode {
    const scalar = SCALAR_DEFINITIONS[alias];
    if (!scalar) throw new Error(`no scalar definition for ${alias}`);
    const [name, node] = scalar;
    this.definitions[name] ??= { ...node };
    return { $def: name };
  }

  /** List and map semantics of the field, from the upstream struct tags. */
  private fieldNode(node: StoredNode, owner: string, field: string): StoredNode {
    const key = `${owner}.${field}`;
    if (node.type === 'array') {
      const tags = LIST_TAGS[key] ?? { listType: 'atomic' as const };
      node['x-kubernetes-list-type'] = tags.listType;
      if (tags.listMapKeys) node['x-kubernetes-list-map-keys'] = tags.listMapKeys;
      if (tags.patchStrategy) node['x-kubernetes-patch-strategy'] = tags.patchStrategy;
      if (tags.patchMergeKey) node['x-kubernetes-patch-merge-key'] = tags.patchMergeKey;
    } else if (LIST_TAGS[key]) {
      throw new Error(`${key} has list tags but is not a list`);
    }
    if (ATOMIC_MAPS.has(key)) node['x-kubernetes-map-type'] = 'atomic';
    return node;
  }

  private resolve(name: ts.EntityName): ts.Declaration {
    let symbol = this.checker.getSymbolAtLocation(name);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const decl = symbol?.declarations?.[0];
    if (!decl) throw new Error(`cannot resolve type ${name.getText()}`);
    return decl;
  }

  private findSibling(decl: ts.InterfaceDeclaration, name: string): ts.InterfaceDeclaration {
    const found = decl
      .getSourceFile()
      .statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name);
    if (!found) throw new Error(`no interface ${name} next to ${decl.name.text}`);
    return found;
  }

  private definitionName(decl: ts.InterfaceDeclaration): string {
    const module = this.moduleOfFile(decl.getSourceFile().fileName);
    if (!module) throw new Error(`${decl.name.text} is declared outside the known kubernetes-types modules`);
    return `${MODULE_PREFIXES[module]}.${decl.name.text}`;
  }

  private describe(name: ts.Node): string | undefined {
    const symbol = this.checker.getSymbolAtLocation(name);
    const text = symbol ? ts.displayPartsToString(symbol.getDocumentationComment(this.checker)) : '';
    return firstSentence(text);
  }
}

function numberNode(owner: string, field: string): StoredNode {
  const key = `${owner}.${field}`;
  if (FLOAT64_FIELDS.has(key)) return { type: 'number', format: 'double' };
  return { type: 'integer', format: INT64_FIELDS.has(key) ? 'int64' : 'int32' };
}

function propName(member: ts.PropertySignature): string {
  const n = member.name;
  return ts.isIdentifier(n) || ts.isStringLiteral(n) ? n.text : n.getText();
}

/** `kubectl explain` shows descriptions; one sentence keeps the committed file small. */
export function firstSentence(text: string): string | undefined {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (!flat) return undefined;
  // A sentence ends at . ! ? followed by a capitalised word, but not after an abbreviation like "e.g.".
  const m = /^(.*?(?<!\b(?:e\.g|i\.e|etc|vs))[.!?])(?=\s+[A-Z(`"'])/.exec(flat);
  const sentence = m?.[1] ?? flat;
  return sentence.length > 400 ? `${sentence.slice(0, 397)}...` : sentence;
}

function sortKeys<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
