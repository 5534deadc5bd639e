/**
 * Self time of a V8 .cpuprofile (node --cpu-prof, or the inspector's Profiler.stop), by function and by module,
 * with frames of a minified bundle mapped back to their sources through the bundle's linked source maps
 * (node:module's SourceMap: no parser of our own). `(idle)` is left out: it is time spent waiting, not CPU.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, round } from './stats.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  /** Milliseconds of samples outside `(idle)`. */
  totalMs: number;
  /** The heaviest functions: `name (source:line)`, milliseconds and share of totalMs. */
  functions: { name: string; ms: number; share: number }[];
  /** The same by module: a package, a first-party file, or V8's own (`(garbage collector)`, `(program)`). */
  modules: { name: string; ms: number; share: number }[];
  /** The modules in a few areas (areaOf): where a pass's CPU goes at a glance. */
  areas: Record<Area, { ms: number; share: number }>;
}

export const AREAS = [
  'product code',
  'AWS SDK',
  'Node sockets, TLS, HTTP',
  'Node crypto',
  'Node other (events, promises, timers)',
  'V8 (collector, compiler)',
  'other packages',
] as const;
export type Area = (typeof AREAS)[number];

/** Node's native functions (no script) by what they serve, as they appear in profiles. */
const SOCKET_NATIVES =
  /^(writev|writeLatin1String|writeUtf8String|writeBuffer|writeAsciiString|readStart|readStop|shutdown|close|connect)$/;
const CRYPTO_NATIVES =
  /^(verify|sign|parseX509|checkIssued|checkPrivateKey|checkCA|keyDetail|exportJwk|init|update|digest|Hash|Hmac|run|signOneShot|generateKeyPair.*)$/;

/** The area of a module as moduleOf names it. */
export function areaOf(module: string): Area {
  if (module === '(garbage collector)' || module === '(program)') return 'V8 (collector, compiler)';
  if (/^@(smithy|aws-sdk|aws-crypto)\//.test(module)) return 'AWS SDK';
  const native = module.startsWith('(native) ') ? module.slice('(native) '.length) : '';
  if (/^node:(_http|https?$|net$|tls$|_tls|internal\/(streams|stream_base|tls|net|http))/.test(module))
    return 'Node sockets, TLS, HTTP';
  if (SOCKET_NATIVES.test(native)) return 'Node sockets, TLS, HTTP';
  if (/^node:(crypto|internal\/crypto)/.test(module) || CRYPTO_NATIVES.test(native)) return 'Node crypto';
  if (module.startsWith('node:') || native) return 'Node other (events, promises, timers)';
  // A first-party file has an extension; a package (what moduleOf makes of node_modules paths) has none.
  if (!/\.[cm]?[jt]s$/.test(module)) return 'other packages';
  return 'product code';
}

/** Where a frame of the bundle came from: its original file and line, and its name if the map has one. */
interface Origin {
  source: string;
  line: number;
  name?: string;
}

/** Maps frames of files with a linked source map (`//# sourceMappingURL=` beside them); caches the maps. */
class FrameMapper {
  private readonly maps = new Map<string, { map: SourceMap; dir: string } | null>();
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  origin(frame: CallFrame): Origin | undefined {
    if (!frame.url.startsWith('file:')) return undefined;
    const file = fileURLToPath(frame.url);
    let entry = this.maps.get(file);
    if (entry === undefined) {
      try {
        entry = { map: new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))), dir: dirname(file) };
      } catch {
        entry = null;
      }
      this.maps.set(file, entry);
    }
    if (!entry) return { source: relative(this.root, file), line: frame.lineNumber + 1 };
    const found = entry.map.findEntry(frame.lineNumber, frame.columnNumber) as {
      originalSource?: string;
      originalLine?: number;
      name?: string;
    };
    if (!found.originalSource) return { source: relative(this.root, file), line: frame.lineNumber + 1 };
    const source = found.originalSource.startsWith('file:')
      ? fileURLToPath(found.originalSource)
      : resolve(entry.dir, found.originalSource);
    return { source: relative(this.root, source), line: (found.originalLine ?? 0) + 1, name: found.name };
  }
}

/**
 * A package (`@smithy/signature-v4`), a first-party file, `(native) name` for V8's and Node's built-in functions,
 * or what V8 calls the frame (`(garbage collector)`).
 */
function moduleOf(frame: CallFrame, origin: Origin | undefined): string {
  if (!origin && !frame.url && frame.functionName && !frame.functionName.startsWith('('))
    return `(native) ${frame.functionName}`;
  if (!origin) return frame.url || frame.functionName || '(unknown)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(origin.source)?.[1];
  return pkg ?? origin.source;
}

/**
 * Self time by function and module. `root` is what source paths are shown relative to; files of other
 * builds (an older revision's) are shown relative to it too.
 */
export function selfTime(profile: CpuProfile, root: string, top = 15): SelfTime {
  const mapper = new FrameMapper(root);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fnMs = new Map<string, number>();
  const modMs = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // Every sample weighs the sampling interval (the median gap): a gap while the thread waited in the event
  // loop is not CPU, and V8 does not always mark that time idle.
  const interval = median(deltas.filter((d) => d > 0));
  let total = 0;
  const origins = new Map<number, { fn: string; mod: string } | null>();
  for (let i = 0; i < samples.length; i++) {
    const us = interval;
    let label = origins.get(samples[i]);
    if (label === undefined) {
      const node = byId.get(samples[i]);
      if (!node || node.callFrame.functionName === '(idle)') label = null;
      else {
        const origin = mapper.origin(node.callFrame);
        const name = origin?.name || node.callFrame.functionName || '(anonymous)';
        label = {
          fn: origin ? `${name} (${origin.source}:${origin.line})` : name,
          mod: moduleOf(node.callFrame, origin),
        };
      }
      origins.set(samples[i], label);
    }
    if (!label) continue;
    total += us;
    fnMs.set(label.fn, (fnMs.get(label.fn) ?? 0) + us);
    modMs.set(label.mod, (modMs.get(label.mod) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: round(us / 1000, 1), share: round(us / total, 3) }));
  const areaMs = new Map<Area, number>(AREAS.map((a) => [a, 0]));
  for (const [module, us] of modMs) areaMs.set(areaOf(module), (areaMs.get(areaOf(module)) ?? 0) + us);
  const areas = Object.fromEntries(
    [...areaMs].map(([a, us]) => [a, { ms: round(us / 1000, 1), share: round(us / total, 3) }]),
  ) as SelfTime['areas'];
  return { totalMs: round(total / 1000, 1), functions: rank(fnMs), modules: rank(modMs), areas };
}

/** Reads a .cpuprofile file. */
export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}
