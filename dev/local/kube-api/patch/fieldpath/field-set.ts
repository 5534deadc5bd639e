/**
 * A set of field paths (structured-merge-diff's fieldpath.Set) as a trie. A node is a *member* when its
 * path itself is in the set; it may also have children. Set algebra is member-wise, as in SMD: removing
 * `.spec` does not remove `.spec.replicas` (recursiveDifference does).
 *
 * A set is built (insert, node) and then never changed: the algebra returns new sets, or a set itself
 * where the answer is that set, so a set can be shared and its FieldsV1 encoding kept (fields-v1.ts).
 */
import { comparePE, encodePE, type Path, type PathElement } from './path-element.ts';

interface SetNode {
  readonly pe: PathElement;
  member: boolean;
  readonly children: FieldSet;
}

export class FieldSet {
  /**
   * Created at the first member or child: most sets in a managed-fields pass are the empty children of
   * leaves, and a Map for each was the local API's largest single allocation.
   */
  private map: Map<string, SetNode> | undefined;

  private get nodes(): ReadonlyMap<string, SetNode> {
    return this.map ?? NO_NODES;
  }

  private put(id: string, node: SetNode): void {
    this.map ??= new Map();
    this.map.set(id, node);
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: Path): void {
    if (path.length === 0) return;
    let set: FieldSet = this;
    for (let i = 0; i < path.length; i++) {
      const pe = path[i];
      if (pe === undefined) continue; // i < path.length
      const node = set.node(pe, true)!;
      if (i === path.length - 1) node.member = true;
      set = node.children;
    }
  }

  /** Child node for an element, created on demand. */
  node(pe: PathElement, create = false): SetNode | undefined {
    const id = encodePE(pe);
    let n = this.map?.get(id);
    if (!n && create) {
      n = { pe, member: false, children: new FieldSet() };
      this.put(id, n);
    }
    return n;
  }

  has(path: Path): boolean {
    let set: FieldSet = this;
    for (let i = 0; i < path.length; i++) {
      const pe = path[i];
      if (pe === undefined) return false; // i < path.length
      const n: SetNode | undefined = set.nodes.get(encodePE(pe));
      if (!n) return false;
      if (i === path.length - 1) return n.member;
      set = n.children;
    }
    return false;
  }

  /** The subtree under one element (SMD's WithPrefix), or an empty set. */
  withPrefix(pe: PathElement): FieldSet {
    return this.nodes.get(encodePE(pe))?.children ?? EMPTY;
  }

  isEmpty(): boolean {
    if (!this.map) return true;
    for (const n of this.nodes.values()) if (n.member || !n.children.isEmpty()) return false;
    return true;
  }

  /** Child nodes in SMD's canonical order. */
  sortedNodes(): SetNode[] {
    if (!this.map) return [];
    if (this.map.size === 1) return [...this.map.values()];
    return [...this.nodes.values()].sort((a, b) => comparePE(a.pe, b.pe));
  }

  /** Member-wise union; one of the two itself when the other is empty (see the class comment). */
  union(other: FieldSet): FieldSet {
    if (other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    const out = this.clone();
    out.addAll(other);
    return out;
  }

  private addAll(other: FieldSet): void {
    for (const [id, n] of other.nodes) {
      let mine = this.map?.get(id);
      if (!mine) {
        mine = { pe: n.pe, member: false, children: new FieldSet() };
        this.put(id, mine);
      }
      mine.member ||= n.member;
      mine.children.addAll(n.children);
    }
  }

  /** Member-wise difference; the set itself when the two share no member (see the class comment). */
  difference(other: FieldSet): FieldSet {
    if (!this.sharesMemberWith(other)) return this;
    return this.combine(other, (a, b) => a && !b, false);
  }

  private sharesMemberWith(other: FieldSet): boolean {
    if (!this.map || !other.map) return false;
    const small = this.map.size <= other.map.size ? this.map : other.map;
    const large = small === this.map ? other.map : this.map;
    for (const [id, n] of small) {
      const o = large.get(id);
      if (o && ((n.member && o.member) || n.children.sharesMemberWith(o.children))) return true;
    }
    return false;
  }

  intersection(other: FieldSet): FieldSet {
    if (!this.sharesMemberWith(other)) return EMPTY;
    return this.combine(other, (a, b) => a && b, true);
  }

  /** Remove every path of `other` together with everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, n] of this.nodes) {
      const o = other.nodes.get(id);
      if (o?.member) continue;
      const children = o ? n.children.recursiveDifference(o.children) : n.children.clone();
      if (n.member || !children.isEmpty()) out.put(id, { pe: n.pe, member: n.member, children });
    }
    return out;
  }

  private combine(other: FieldSet, keep: (a: boolean, b: boolean) => boolean, needBoth: boolean): FieldSet {
    const out = new FieldSet();
    for (const [id, n] of this.nodes) {
      const o = other.nodes.get(id);
      if (!o && needBoth) continue;
      const member = keep(n.member, o?.member ?? false);
      const children = n.children.combine(o?.children ?? EMPTY, keep, needBoth);
      if (member || !children.isEmpty()) out.put(id, { pe: n.pe, member, children });
    }
    return out;
  }

  /**
   * A copy whose membership flags `decide` may raise; `ctx` is threaded down the tree (e.g. the schema
   * of each node), so callers can mark nodes by what they are rather than by the set alone.
   */
  withMembers<C>(decide: (pe: PathElement, member: boolean, ctx: C) => [boolean, C]): (ctx: C) => FieldSet {
    return (ctx: C) => {
      const out = new FieldSet();
      for (const [id, n] of this.nodes) {
        const [member, childCtx] = decide(n.pe, n.member, ctx);
        out.put(id, { pe: n.pe, member, children: n.children.withMembers(decide)(childCtx) });
      }
      return out;
    };
  }

  clone(): FieldSet {
    const out = new FieldSet();
    for (const [id, n] of this.nodes) out.put(id, { pe: n.pe, member: n.member, children: n.children.clone() });
    return out;
  }

  equals(other: FieldSet): boolean {
    return this.difference(other).isEmpty() && other.difference(this).isEmpty();
  }

  /** Every member path, in canonical order. */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = [];
    for (const n of this.sortedNodes()) {
      const p = [...prefix, n.pe];
      if (n.member) out.push(p);
      out.push(...n.children.paths(p));
    }
    return out;
  }
}

const NO_NODES: ReadonlyMap<string, SetNode> = new Map();
const EMPTY = new FieldSet();
