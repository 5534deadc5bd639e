/**
 * meta.k8s.io/v1 Table responses (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), which is what
 * `kubectl get` prints. Custom resources use their CRD's additionalPrinterColumns exactly as
 * apiextensions-apiserver does; built-in kinds use kube's printers (table-printers.ts).
 */
import type { ApiObject } from './api-object.ts';
import { evaluateJsonPath, JsonPathError } from './jsonpath.ts';
import {
  age,
  type BuiltinPrinter,
  builtinPrinters,
  type ColumnDefinition,
  CREATION_TIMESTAMP_DESCRIPTION,
  genericPrinter,
  NAME_DESCRIPTION,
} from './table-printers.ts';

export interface TableResource {
  group: string;
  version: string;
  kind: string;
  resource: string;
  namespaced: boolean;
  /** Set for custom resources (even when empty: then kube shows Name and Age). */
  printerColumns?: Array<{
    name: string;
    type: string;
    jsonPath: string;
    description?: string;
    priority?: number;
    format?: string;
  }>;
  /** True for resources served from a CRD; inferred from printerColumns when absent. */
  custom?: boolean;
}

export interface TableOptions {
  includeObject?: 'None' | 'Metadata' | 'Object';
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
  /** Clock for Age cells (ms since epoch); defaults to now. */
  now?: number;
  /** `?noHeaders=true`... kube's TableOptions.NoHeaders: omit columnDefinitions. */
  noHeaders?: boolean;
}

export class TableError extends Error {
  readonly status: 400 | 500;
  constructor(message: string, status: 400 | 500) {
    super(message);
    this.name = 'TableError';
    this.status = status;
  }
}

interface CustomColumn {
  def: ColumnDefinition;
  jsonPath: string;
}

function customColumns(res: TableResource): CustomColumn[] {
  const cols = res.printerColumns ?? [];
  // apiextensions serves a default Age column only when the CRD declares no columns at all.
  const effective = cols.length
    ? cols
    : [
        {
          name: 'Age',
          type: 'date',
          jsonPath: '.metadata.creationTimestamp',
          description: CREATION_TIMESTAMP_DESCRIPTION,
        },
      ];
  return effective.map((c) => ({
    jsonPath: c.jsonPath,
    def: {
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      priority: c.priority ?? 0,
    },
  }));
}

/** client-go jsonpath's PrintResults for one value: strings raw, objects/arrays as compact JSON. */
function printValue(v: unknown): string {
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** apiextensions' cellForJSONValue: a typed cell, or null when the value does not fit the type. */
function typedCell(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      if (typeof value !== 'string') return null;
      if (value === '' || value === 'null') return '<unknown>';
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)
        ? age(value, now)
        : '<invalid>';
    default:
      return null;
  }
}

function customCells(obj: ApiObject, columns: CustomColumn[], now: number): unknown[] {
  const cells: unknown[] = [obj.metadata?.name];
  for (const c of columns) {
    let results: unknown[];
    try {
      results = evaluateJsonPath(c.jsonPath, obj);
    } catch (err) {
      if (err instanceof JsonPathError) {
        cells.push(null);
        continue;
      }
      throw err;
    }
    // kube takes the first result only ("simple JSON path").
    if (results.length === 0 || results[0] === undefined) {
      cells.push(null);
    } else if (c.def.type === 'string') {
      cells.push(printValue(results[0]));
    } else {
      cells.push(typedCell(c.def.type, results[0], now));
    }
  }
  return cells;
}

function rowObject(obj: ApiObject, includeObject: TableOptions['includeObject']): unknown {
  switch (includeObject ?? 'Metadata') {
    case 'None':
      return null;
    case 'Object':
      return obj;
    case 'Metadata':
      return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata ?? {} };
    default:
      throw new TableError(`unrecognized includeObject value: ${JSON.stringify(includeObject)}`, 400);
  }
}

function printerFor(res: TableResource): BuiltinPrinter {
  return builtinPrinters[`${res.group}/${res.resource}`] ?? genericPrinter;
}

/**
 * Converts a list (or one object, as a one-item list) of `resource` into a Table. Throws TableError(400)
 * for an unknown includeObject value, like kube-apiserver.
 */
export function toTable(resource: TableResource, items: object[], opts: TableOptions): object {
  const now = opts.now ?? Date.now();
  const isCustom = resource.custom ?? resource.printerColumns !== undefined;
  let columnDefinitions: ColumnDefinition[];
  let rows: object[];
  if (isCustom) {
    const columns = customColumns(resource);
    columnDefinitions = [
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      ...columns.map((c) => c.def),
    ];
    rows = (items as ApiObject[]).map((o) => ({
      cells: customCells(o, columns, now),
      object: rowObject(o, opts.includeObject),
    }));
  } else {
    const printer = printerFor(resource);
    columnDefinitions = printer.columns;
    rows = (items as ApiObject[]).map((o) => {
      const conditions = printer.conditions?.(o);
      return {
        cells: printer.cells(o, now),
        ...(conditions ? { conditions } : {}),
        object: rowObject(o, opts.includeObject),
      };
    });
  }
  const metadata: Record<string, unknown> = { resourceVersion: opts.resourceVersion };
  if (opts.continue) metadata.continue = opts.continue;
  if (opts.remainingItemCount !== undefined) metadata.remainingItemCount = opts.remainingItemCount;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: opts.noHeaders ? [] : columnDefinitions,
    rows,
  };
}
