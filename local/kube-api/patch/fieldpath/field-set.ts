/**
 * A set of field paths (structured-merge-diff's fieldpath.Set) as a trie. A node is a *member* when its
 * path itself is in the set; it may also have children. Set algebra is member-wise, as in SMD: removing
 * `.spec` does not remove `.spec.replicas` (recursiveDifference does).
 */
import { comparePE, encodePE, type Path, type PathElement } from './path-element.ts';

interface SetNode {
  readonly pe: PathElement;
  member: boolean;
  readonly children: FieldSet;
}

export class FieldSet {
  private readonly nodes = new Map<string, SetNode>();

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: Path): void {
    if (path.length === 0) return;
    let set: FieldSet = this;
    for (let i = 0; i < path.length; i++) {
      const node = set.node(path[i], true)!;
      if (i === path.length - 1) node.member = true;
      set = node.children;
    }
  }

  /** Child node for an element, created on demand. */
  node(pe: PathElement, create = false): SetNode | undefined {
    const id = encodePE(pe);
    let n = this.nodes.get(id);
    if (!n && create) {
      n = { pe, member: false, children: new FieldSet() };
      this.nodes.set(id, n);
    }
    return n;
  }

  has(path: Path): boolean {
    let set: FieldSet | undefined = this;
    for (let i = 0; i < path.length && set; i++) {
      const n: SetNode | undefined = set.nodes.get(encodePE(path[i]));
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
    for (const n of this.nodes.values()) if (n.member || !n.children.isEmpty()) return false;
    return true;
  }

  /** Child nodes in SMD's canonical order. */
  sortedNodes(): SetNode[] {
    return [...this.nodes.values()].sort((a, b) => comparePE(a.pe, b.pe));
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    out.addAll(other);
    return out;
  }

  private addAll(other: FieldSet): void {
    for (const [id, n] of other.nodes) {
      let mine = this.nodes.get(id);
      if (!mine) {
        mine = { pe: n.pe, member: false, children: new FieldSet() };
        this.nodes.set(id, mine);
      }
      mine.member ||= n.member;
      mine.children.addAll(n.children);
    }
  }

  difference(other: FieldSet): FieldSet {
    return this.combine(other, (a, b) => a && !b, false);
  }

  intersection(other: FieldSet): FieldSet {
    return this.combine(other, (a, b) => a && b, true);
  }

  /** Remove every path of `other` together with everything below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, n] of this.nodes) {
      const o = other.nodes.get(id);
      if (o?.member) continue;
      const children = o ? n.children.recursiveDifference(o.children) : n.children.clone();
      if (n.member || !children.isEmpty()) out.nodes.set(id, { pe: n.pe, member: n.member, children });
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
      if (member || !children.isEmpty()) out.nodes.set(id, { pe: n.pe, member, children });
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
        out.nodes.set(id, { pe: n.pe, member, children: n.children.withMembers(decide)(childCtx) });
      }
      return out;
    };
  }

  clone(): FieldSet {
    const out = new FieldSet();
    for (const [id, n] of this.nodes) out.nodes.set(id, { pe: n.pe, member: n.member, children: n.children.clone() });
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

const EMPTY = new FieldSet();
