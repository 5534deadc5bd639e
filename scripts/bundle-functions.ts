/**
 * Builds the functions' bundles the way `npm run package` does (serverless-esbuild with serverless.yml's
 * custom.esbuild options), without osls: fast enough for the default test suite and the bundles benchmark.
 * Also reads which AWS SDK exports each handler's code really uses, from a tree-shaken build with the
 * packages left external: the basis of the per-function IAM check (test/functions/common/permissions.test.ts)
 * and of the SDK-only baseline bundles the load time is compared against (dev/bench/bundles.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { parseServerlessYaml } from '../dev/local/bus/serverless-config.ts';

export const ROOT = join(import.meta.dirname, '..');

export interface FunctionEntry {
  /** The function's key under `functions:` in serverless.yml. */
  name: string;
  /** Entry source file, relative to the repository root. */
  entry: string;
}

export interface ServerlessBuild {
  functions: FunctionEntry[];
  /** custom.esbuild without serverless-esbuild's own keys: what it hands to esbuild. */
  esbuildOptions: esbuild.BuildOptions;
  /** provider.environment.NODE_OPTIONS: how Lambda starts Node for these bundles. */
  nodeOptions: string;
}

/** serverless-esbuild options that it strips before calling esbuild (its dist/bundle.js). */
const PLUGIN_ONLY_OPTIONS = [
  'concurrency',
  'zipConcurrency',
  'exclude',
  'nativeZip',
  'packager',
  'packagePath',
  'watch',
  'keepOutputDirectory',
  'packagerOptions',
  'installExtraArgs',
  'outputFileExtension',
  'outputBuildFolder',
  'outputWorkFolder',
  'nodeExternals',
  'skipBuild',
  'skipRebuild',
  'skipBuildExcludeFns',
  'stripEntryResolveExtensions',
  'disposeContext',
  'config',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readServerlessBuild(file = join(ROOT, 'serverless.yml')): ServerlessBuild {
  const doc = parseServerlessYaml(readFileSync(file, 'utf8'));
  const custom = isObject(doc.custom) && isObject(doc.custom.esbuild) ? doc.custom.esbuild : undefined;
  if (!custom) throw new Error(`${file}: custom.esbuild: expected the serverless-esbuild options mapping`);
  const options: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(custom)) if (!PLUGIN_ONLY_OPTIONS.includes(k)) options[k] = v;
  // serverless-esbuild marks `exclude` (default ['aws-sdk']) external too; ours is [] (bundle everything).
  const exclude = Array.isArray(custom.exclude) ? (custom.exclude as string[]) : ['aws-sdk'];
  options.external = [...((options.external as string[] | undefined) ?? []), ...(exclude.includes('*') ? [] : exclude)];

  if (!isObject(doc.functions))
    throw new Error(`${file}: functions: expected a mapping of function name to definition`);
  const functions = Object.entries(doc.functions).map(([name, fn]): FunctionEntry => {
    const handler = isObject(fn) ? fn.handler : undefined;
    if (typeof handler !== 'string' || !/^[\w/.-]+\.\w+$/.test(handler)) {
      throw new Error(`${file}: functions.${name}.handler: expected <path>.<export>, got ${JSON.stringify(handler)}`);
    }
    return { name, entry: `${handler.slice(0, handler.lastIndexOf('.'))}.ts` };
  });
  const provider = isObject(doc.provider) ? doc.provider : {};
  const env = isObject(provider.environment) ? provider.environment : {};
  return {
    functions,
    esbuildOptions: options as esbuild.BuildOptions,
    nodeOptions: typeof env.NODE_OPTIONS === 'string' ? env.NODE_OPTIONS : '',
  };
}

export interface BuiltBundle {
  /** The entry .mjs written: what Lambda loads on a cold start. */
  file: string;
  /** Its size (minified code, without the source map). */
  bytes: number;
  /** Code split off into chunks (splitting), each with its size: shared ones load at start, the rest on first use. */
  chunks: { file: string; bytes: number }[];
  /** Entry plus chunks: all the code the function ships. */
  totalBytes: number;
  /** Entry plus the chunks it imports statically: the code a cold start loads. */
  startBytes: number;
  metafile: esbuild.Metafile;
}

/** Bundles one entry (a file, or source text for a synthetic entry) with the packaging options into outdir. */
export async function buildBundle(
  build: ServerlessBuild,
  entry: string | { name: string; contents: string },
  outdir: string,
): Promise<BuiltBundle> {
  const source =
    typeof entry === 'string'
      ? { entryPoints: [join(ROOT, entry)] }
      : {
          stdin: { contents: entry.contents, resolveDir: ROOT, sourcefile: `${entry.name}.ts`, loader: 'ts' as const },
        };
  const result = await esbuild.build({
    ...build.esbuildOptions,
    ...source,
    absWorkingDir: ROOT,
    outdir,
    ...(typeof entry === 'string' ? {} : { entryNames: entry.name }),
    metafile: true,
    write: true,
    logLevel: 'silent',
  });
  const code = Object.entries(result.metafile.outputs).filter(([f]) => !f.endsWith('.map'));
  const [file, output] = code.find(([, o]) => o.entryPoint !== undefined) ?? code[0];
  const chunks = code.filter(([f]) => f !== file).map(([f, o]) => ({ file: join(ROOT, f), bytes: o.bytes }));
  return {
    file: join(ROOT, file),
    bytes: output.bytes,
    chunks,
    totalBytes: output.bytes + chunks.reduce((n, c) => n + c.bytes, 0),
    startBytes: bytesAtStart(result.metafile),
    metafile: result.metafile,
  };
}

/**
 * The output files a cold start evaluates: the entry and every chunk it reaches through static imports (what
 * `import()` of the handler loads), not the chunks loaded on first use.
 */
export function outputsAtStart(metafile: esbuild.Metafile): string[] {
  const outputs = metafile.outputs;
  const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint !== undefined);
  if (!entry) throw new Error('outputsAtStart: the build has no entry output');
  const atStart = new Set([entry]);
  for (const file of atStart)
    for (const i of outputs[file].imports) if (i.kind === 'import-statement' && outputs[i.path]) atStart.add(i.path);
  return [...atStart];
}

/** Bytes of code a cold start loads: the outputs of `outputsAtStart`. */
export function bytesAtStart(metafile: esbuild.Metafile): number {
  return outputsAtStart(metafile).reduce((n, f) => n + metafile.outputs[f].bytes, 0);
}

/** The heaviest packages (or first-party directories) of a bundle, by bytes of minified output. */
export function heaviestInputs(metafile: esbuild.Metafile, top = 8): { input: string; bytes: number }[] {
  const output =
    Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined) ?? Object.values(metafile.outputs)[0];
  const byInput = new Map<string, number>();
  for (const [path, input] of Object.entries(output.inputs)) {
    const pkg = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? path.split('/').slice(0, 2).join('/');
    byInput.set(pkg, (byInput.get(pkg) ?? 0) + input.bytesInOutput);
  }
  return [...byInput]
    .map(([input, bytes]) => ({ input, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

export interface SdkBinding {
  /** `@aws-sdk/lib-dynamodb`, ... */
  module: string;
  /** The exported name: `GetCommand`, `DynamoDBClient`, ... */
  name: string;
}

export interface SdkUsage {
  /** AWS SDK exports the handler's reachable code references (imports whose bindings are all unused are left out). */
  bindings: SdkBinding[];
  /** Every package the handler imports, for spotting ones that call AWS on their own. */
  packages: string[];
  /** SDK imports whose use cannot be read from names (namespace, default or dynamic imports). */
  opaque: string[];
}

/**
 * Which AWS SDK exports the handler's code uses. The entry is bundled unminified with every package left
 * external, so esbuild's tree shaking drops our own functions nothing reachable calls (a repository helper
 * only the CLI uses, say) and the remaining imports name the SDK classes the handler can reach.
 */
export async function sdkUsage(entry: string): Promise<SdkUsage> {
  const result = await esbuild.build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0].text;
  const importRe = /^import\s+(.+?)\s+from\s*"([^"]+)";?$/gms;
  const body = text.replace(importRe, '');
  const bindings: SdkBinding[] = [];
  const opaque: string[] = [];
  const packages = new Set<string>();
  for (const [, clause, module] of text.matchAll(importRe)) {
    if (!module.startsWith('node:')) packages.add(module);
    if (!module.startsWith('@aws-sdk/')) continue;
    const named = clause.match(/\{([^}]*)\}/)?.[1];
    if (!named || clause.replace(/\{[^}]*\}/, '').replace(/[\s,]/g, '')) opaque.push(`${clause} from ${module}`);
    for (const spec of (named ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const [name, local = name] = spec.split(/\s+as\s+/);
      if (new RegExp(`(?<![\\w$])${local.replace(/\$/g, '\\$')}(?![\\w$])`).test(body)) bindings.push({ module, name });
    }
  }
  for (const m of text.matchAll(/\bimport\(\s*["'`]([^"'`]+)/g)) {
    packages.add(m[1]);
    if (m[1].startsWith('@aws-sdk/')) opaque.push(`import(${m[1]})`);
  }
  const unique = [...new Map(bindings.map((b) => [`${b.module} ${b.name}`, b])).values()];
  return {
    bindings: unique.sort((a, b) => `${a.module}${a.name}`.localeCompare(`${b.module}${b.name}`)),
    packages: [...packages].sort(),
    opaque,
  };
}

/** Source of a bundle that loads only the SDK exports a handler uses: the load-time baseline. */
export function sdkBaselineSource(usage: SdkUsage): string {
  const byModule = new Map<string, string[]>();
  for (const b of usage.bindings) byModule.set(b.module, [...(byModule.get(b.module) ?? []), b.name]);
  return [...byModule].map(([module, names]) => `export { ${names.join(', ')} } from '${module}';`).join('\n');
}
