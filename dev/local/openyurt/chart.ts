/**
 * OpenYurt's yurt-manager chart (charts/yurt-manager of the pinned Go module, put beside the CRDs by
 * `npm run kube-bins`) rendered without Helm, by a small strict substitution that knows exactly the
 * constructs the manifests yurt-manager needs use, and throws on any other:
 *
 *  - `{{ .Release.Namespace }}` → the namespace (kube-system: yurt-manager v1.5.1 always authenticates its
 *    controllers as ServiceAccounts in kube-system, whatever `--working-namespace` says);
 *  - `{{ .Values.a.b }}` → a scalar of values.yaml (with the caller's overrides), e.g. `.Values.ports.webhook`;
 *  - a line that is only `{{- include "yurt-manager.labels" . | nindent N }}` (or `.selectorLabels`) is
 *    dropped: the chart's labels (`helm.sh/chart`, `app.kubernetes.io/*`) say who installed what, and nothing
 *    here selects on them. The key left without a value (`labels:`, `selector:`) is removed with it.
 *
 * Documents of a skipped kind (the Deployment: yurt-manager runs as a process here) are dropped before they
 * are rendered, so their `{{- if }}`/`toYaml` never need to be understood. Files whose name starts with `_`
 * (`_helpers.tpl`) hold only definitions, as in Helm, and are not rendered.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse, parseDocument } from 'yaml';
import { type OpenYurtRelease, requireOpenYurtChart } from '../kube-bins/index.ts';

/** What a template may refer to. */
export interface ChartContext {
  /** `.Release.Namespace` */
  namespace: string;
  /** `.Values`: values.yaml merged with overrides. */
  values: Readonly<Record<string, unknown>>;
  /** Kinds whose documents are dropped unrendered (e.g. Deployment). */
  skipKinds?: ReadonlySet<string>;
}

export class ChartTemplateError extends Error {
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`);
    this.name = 'ChartTemplateError';
  }
}

const INCLUDE_LABELS_LINE =
  /^\s*\{\{-?\s*include\s+"yurt-manager\.(?:labels|selectorLabels)"\s+\.\s*\|\s*nindent\s+\d+\s*-?\}\}\s*$/;
const RELEASE_NAMESPACE = /\{\{-?\s*\.Release\.Namespace\s*-?\}\}/g;
const VALUES_REF = /\{\{-?\s*\.Values\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*-?\}\}/g;
const DOCUMENT_SEPARATOR = /^---\s*$/;
const TOP_LEVEL_KIND = /^kind:\s*(\S+)\s*$/m;

/**
 * Renders one template file into the objects it declares. Throws ChartTemplateError naming the file and line
 * of any template construct not listed above, of a missing or non-scalar value, and of YAML that does not
 * parse into an object with apiVersion, kind and metadata.name.
 */
export function renderTemplate(file: string, text: string, ctx: ChartContext): KubernetesObject[] {
  const objects: KubernetesObject[] = [];
  for (const doc of splitDocuments(text)) {
    const kind = TOP_LEVEL_KIND.exec(doc.lines.join('\n'))?.[1];
    if (kind !== undefined && ctx.skipKinds?.has(kind)) continue;
    const rendered: string[] = [];
    doc.lines.forEach((line, i) => {
      const at = doc.firstLine + i;
      if (INCLUDE_LABELS_LINE.test(line)) return;
      const out = line
        .replace(RELEASE_NAMESPACE, () => ctx.namespace)
        .replace(VALUES_REF, (_, path: string) => scalarValue(file, at, ctx.values, path));
      const left = /\{\{.*?(?:\}\}|$)|\}\}/.exec(out);
      if (left) {
        throw new ChartTemplateError(
          file,
          at,
          `template construct ${JSON.stringify(left[0])} is not one this renderer handles ` +
            '(.Release.Namespace, .Values.<path>, an include of yurt-manager.labels/selectorLabels on its own line); ' +
            'teach dev/local/openyurt/chart.ts this construct, or skip the document by its kind',
        );
      }
      rendered.push(out);
    });
    const yamlText = rendered.join('\n');
    if (isBlank(yamlText)) continue;
    const parsed = parseDocument(yamlText, { uniqueKeys: true });
    if (parsed.errors.length > 0) {
      throw new ChartTemplateError(file, doc.firstLine, `rendered YAML does not parse: ${parsed.errors[0]!.message}`);
    }
    const value: unknown = dropNulls(parsed.toJS());
    if (!isManifest(value)) {
      throw new ChartTemplateError(
        file,
        doc.firstLine,
        `rendered document is not a Kubernetes object (apiVersion, kind, metadata.name): ${JSON.stringify(value).slice(0, 200)}`,
      );
    }
    objects.push(value);
  }
  return objects;
}

export interface RenderChartOptions {
  /** Default kube-system. */
  namespace?: string;
  /** Deep-merged over values.yaml, e.g. `{ ports: { webhook: 10273 } }`. */
  values?: Record<string, unknown>;
  /** Default: Deployment. */
  skipKinds?: ReadonlySet<string>;
}

/** Every object of a release's yurt-manager chart (templates/*.yaml, in file order), rendered. */
export async function renderYurtManagerChart(
  release: OpenYurtRelease,
  opts: RenderChartOptions = {},
): Promise<KubernetesObject[]> {
  const chart = requireOpenYurtChart(release);
  const values = deepMerge(await readChartValues(release), opts.values ?? {});
  const ctx: ChartContext = {
    namespace: opts.namespace ?? 'kube-system',
    values,
    skipKinds: opts.skipKinds ?? new Set(['Deployment']),
  };
  const files = (await readdir(chart.templatesDir)).filter((f) => !f.startsWith('_') && /\.ya?ml$/.test(f)).sort();
  const objects: KubernetesObject[] = [];
  for (const file of files) {
    const path = join(chart.templatesDir, file);
    objects.push(...renderTemplate(path, await readFile(path, 'utf8'), ctx));
  }
  return objects;
}

/** The chart's values.yaml. */
export async function readChartValues(release: OpenYurtRelease): Promise<Record<string, unknown>> {
  const { valuesFile } = requireOpenYurtChart(release);
  return asRecord(parse(await readFile(valuesFile, 'utf8')), valuesFile);
}

function splitDocuments(text: string): Array<{ firstLine: number; lines: string[] }> {
  const docs: Array<{ firstLine: number; lines: string[] }> = [];
  let current = { firstLine: 1, lines: [] as string[] };
  text.split('\n').forEach((line, i) => {
    if (DOCUMENT_SEPARATOR.test(line)) {
      docs.push(current);
      current = { firstLine: i + 2, lines: [] };
    } else current.lines.push(line);
  });
  docs.push(current);
  return docs;
}

function isBlank(text: string): boolean {
  return text.split('\n').every((l) => l.trim() === '' || l.trim().startsWith('#'));
}

function scalarValue(file: string, line: number, values: Readonly<Record<string, unknown>>, path: string): string {
  let at: unknown = values;
  for (const key of path.split('.')) {
    at = at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined;
  }
  if (typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean') return String(at);
  throw new ChartTemplateError(
    file,
    line,
    `.Values.${path} is ${at === undefined ? 'not set' : `not a scalar (${JSON.stringify(at)})`} in values.yaml or the overrides`,
  );
}

/** A null left by a dropped include line (`labels:` with nothing under it) means "unset", as the apiserver reads it. */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v);
    return out;
  }
  return value;
}

function isManifest(value: unknown): value is KubernetesObject {
  if (value === null || typeof value !== 'object') return false;
  const o = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  return typeof o.apiVersion === 'string' && typeof o.kind === 'string' && typeof o.metadata?.name === 'string';
}

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${what} is not a YAML mapping`);
  return value as Record<string, unknown>;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v !== null &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      b !== null &&
      typeof b === 'object' &&
      !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
