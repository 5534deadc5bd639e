import { contentVersion, type KubeObject } from '../kube.ts';

/**
 * Lists whose entries pool-spirit alone decides, and how the API tells their entries apart (their
 * server-side-apply merge keys). Server-side apply leaves entries another field manager added (a sidecar
 * patched into the Deployment, a second Service port), so the reconcile removes them itself: every entry
 * of these lists that the rendered object does not have is foreign. Lists inside an entry (a container's
 * ports) are checked only for the entries that are pool-spirit's own. The Service selector is decided
 * whole the same way, key by key.
 *
 * Everything else another manager adds stays theirs on purpose (docs/reconcile.md, "Who owns which
 * field"): labels and annotations on the objects and the pod template (e.g. `kubectl rollout restart`'s
 * `kubectl.kubernetes.io/restartedAt`), and fields the API defaults.
 */
interface EntryList {
  /** Fields that identify an entry; a field missing from an entry counts as its default. */
  keys: ReadonlyArray<{ field: string; default?: string }>;
  nested?: Readonly<Record<string, EntryList>>;
}

const byName: EntryList = { keys: [{ field: 'name' }] };
const containers: EntryList = {
  keys: [{ field: 'name' }],
  nested: {
    ports: { keys: [{ field: 'containerPort' }, { field: 'protocol', default: 'TCP' }] },
    env: byName,
    envFrom: { keys: [{ field: 'prefix', default: '' }, { field: 'configMapRef' }, { field: 'secretRef' }] },
    volumeMounts: { keys: [{ field: 'mountPath' }] },
    volumeDevices: { keys: [{ field: 'devicePath' }] },
  },
};
const podSpec = ['spec', 'template', 'spec'];

const AUTHORITATIVE: Readonly<Record<string, ReadonlyArray<{ at: readonly string[]; list: EntryList }>>> = {
  'apps/v1/Deployment': [
    { at: [...podSpec, 'containers'], list: containers },
    { at: [...podSpec, 'initContainers'], list: containers },
    { at: [...podSpec, 'volumes'], list: byName },
    { at: [...podSpec, 'imagePullSecrets'], list: byName },
  ],
  'v1/Service': [{ at: ['spec', 'ports'], list: { keys: [{ field: 'port' }, { field: 'protocol', default: 'TCP' }] } }],
};

/** Maps whose keys pool-spirit alone decides: a key added to the Service selector would select other pods, or none. */
const AUTHORITATIVE_MAPS: Readonly<Record<string, ReadonlyArray<readonly string[]>>> = {
  'v1/Service': [['spec', 'selector']],
};

export interface JsonPatchOp {
  op: 'test' | 'remove' | 'add' | 'replace';
  path: string;
  value?: unknown;
}

/** An entry of the live object that pool-spirit does not render. */
export interface ForeignEntry {
  /** JSON pointer to the entry in the live object. */
  pointer: string;
  /** Readable path, e.g. `spec.template.spec.containers[name=exfil]` (keys only, never values). */
  path: string;
  /** Tests on the entry's key fields: the patch removes exactly the entry that was observed. */
  tests: JsonPatchOp[];
}

interface ListFinding {
  foreign: ForeignEntry[];
  /** Rendered entries the live list lacks, appended in the same patch so a list is never left empty. */
  additions: JsonPatchOp[];
}

type Entry = Record<string, unknown>;

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function keyOf(entry: Entry, list: EntryList): string {
  return JSON.stringify(list.keys.map((k) => entry[k.field] ?? k.default ?? null));
}

function describeKey(entry: Entry, list: EntryList): string {
  return list.keys
    .filter((k) => entry[k.field] !== undefined && typeof entry[k.field] !== 'object')
    .map((k) => `${k.field}=${String(entry[k.field])}`)
    .join(',');
}

function at(obj: unknown, path: readonly string[]): unknown {
  let node = obj;
  for (const step of path)
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[step] : undefined;
  return node;
}

function entries(value: unknown): Entry[] {
  return Array.isArray(value) ? value.filter((e): e is Entry => e !== null && typeof e === 'object') : [];
}

function visit(
  desiredValue: unknown,
  liveValue: unknown,
  list: EntryList,
  pointer: string,
  path: string,
  out: ListFinding,
): void {
  if (!Array.isArray(liveValue)) return;
  const desired = new Map(entries(desiredValue).map((e) => [keyOf(e, list), e]));
  const liveKeys = new Set<string>();
  let foundForeign = false;
  liveValue.forEach((entry: unknown, index) => {
    if (entry === null || typeof entry !== 'object') return;
    const live = entry as Entry;
    const key = keyOf(live, list);
    liveKeys.add(key);
    const own = desired.get(key);
    const entryPointer = `${pointer}/${index}`;
    const entryPath = `${path}[${describeKey(live, list) || index}]`;
    if (!own) {
      foundForeign = true;
      const tests = list.keys
        .filter((k) => live[k.field] !== undefined)
        .map(
          (k): JsonPatchOp => ({ op: 'test', path: `${entryPointer}/${escapePointer(k.field)}`, value: live[k.field] }),
        );
      out.foreign.push({ pointer: entryPointer, path: entryPath, tests });
      return;
    }
    for (const [field, nested] of Object.entries(list.nested ?? {})) {
      visit(own[field], live[field], nested, `${entryPointer}/${escapePointer(field)}`, `${entryPath}.${field}`, out);
    }
  });
  if (!foundForeign) return;
  for (const [key, entry] of desired)
    if (!liveKeys.has(key)) out.additions.push({ op: 'add', path: `${pointer}/-`, value: entry });
}

function findings(desired: KubeObject, live: KubeObject): ListFinding {
  const out: ListFinding = { foreign: [], additions: [] };
  const kind = `${desired.apiVersion}/${desired.kind}`;
  for (const { at: path, list } of AUTHORITATIVE[kind] ?? []) {
    visit(at(desired, path), at(live, path), list, `/${path.map(escapePointer).join('/')}`, path.join('.'), out);
  }
  for (const path of AUTHORITATIVE_MAPS[kind] ?? []) {
    const rendered = at(desired, path);
    const observed = at(live, path);
    if (observed === null || typeof observed !== 'object' || Array.isArray(observed)) continue;
    for (const [key, value] of Object.entries(observed)) {
      if (rendered !== null && typeof rendered === 'object' && key in rendered) continue;
      const pointer = `/${[...path, key].map(escapePointer).join('/')}`;
      out.foreign.push({ pointer, path: `${path.join('.')}[${key}]`, tests: [{ op: 'test', path: pointer, value }] });
    }
  }
  return out;
}

/** Entries of authoritative lists in `live` that `desired` (the rendered object) does not have. */
export function foreignEntries(desired: KubeObject, live: KubeObject): ForeignEntry[] {
  return findings(desired, live).foreign;
}

const foundClean = new WeakMap<KubeObject, Set<string>>();
const CLEAN_VERSIONS = 8;

/** Compares JSON pointers in document order; array indices numerically. */
function documentOrder(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  for (const [i, ai] of as.entries()) {
    const bi = bs[i];
    if (bi === undefined) break;
    if (ai === bi) continue;
    const an = Number(ai);
    const bn = Number(bi);
    return Number.isInteger(an) && Number.isInteger(bn) ? an - bn : ai.localeCompare(bi);
  }
  return as.length - bs.length;
}

/**
 * One JSON patch that removes every foreign entry (each guarded by tests of its key fields, so a list that
 * changed since it was read fails the patch instead of losing the wrong entry) and appends the rendered
 * entries those lists lack. Appends come first (they shift no index), removals last in reverse document
 * order, so each pointer still names the entry that was observed. Empty when there is nothing foreign:
 * a converged object costs no write.
 */
export function foreignEntriesPatch(desired: KubeObject, live: KubeObject): JsonPatchOp[] {
  // A converged pool's pass asks this of the same frozen rendered object and live version each time
  // (core/diff.ts, covers): a version found clean is remembered as clean.
  const version = Object.isFrozen(desired) ? contentVersion(live) : undefined;
  const clean = version === undefined ? undefined : foundClean.get(desired);
  if (version !== undefined && clean?.has(version)) return [];
  const { foreign, additions } = findings(desired, live);
  if (foreign.length === 0) {
    if (version !== undefined) {
      const versions = clean ?? new Set<string>();
      if (versions.size >= CLEAN_VERSIONS) versions.delete(versions.values().next().value as string);
      versions.add(version);
      foundClean.set(desired, versions);
    }
    return [];
  }
  const removals = [...foreign]
    .sort((a, b) => documentOrder(b.pointer, a.pointer))
    .flatMap((f): JsonPatchOp[] => [...f.tests, { op: 'remove', path: f.pointer }]);
  return [...additions, ...removals];
}
