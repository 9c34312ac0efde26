/**
 * RuoYi's trees are flat lists (built client-side by id and parentId) and its tree pickers restore
 * checked keys with parent-child linkage on: listing a parent checks every child. These helpers do
 * the translations both ways on plain `{id, children}` forests.
 */
export interface Node {
  id: number;
  children: readonly Node[];
}

/** Every node, depth first (parents before their children). */
export function flatten<T extends Node>(nodes: readonly T[], out: T[] = []): T[] {
  for (const n of nodes) {
    out.push(n);
    flatten(n.children as readonly T[], out);
  }
  return out;
}

/** The ids of a node and everything below it. */
export function subtreeIds(node: Node, out: number[] = []): number[] {
  out.push(node.id);
  for (const c of node.children) subtreeIds(c, out);
  return out;
}

/**
 * The keys to hand a linked tree picker so that exactly `granted` shows checked: the granted
 * nodes whose whole subtree is granted (a partly granted parent is left out; the picker shows it
 * half-checked by itself).
 */
export function fullyCheckedKeys(forest: readonly Node[], granted: ReadonlySet<number>): number[] {
  const keys: number[] = [];
  const walk = (n: Node): boolean => {
    let all = granted.has(n.id);
    for (const c of n.children) all = walk(c) && all;
    if (all) keys.push(n.id);
    return all;
  };
  for (const n of forest) walk(n);
  return keys;
}

/**
 * RuoYi's saved dept list (checked and half-checked keys) → our custom scope, where each org
 * stands for itself and everything below it: the topmost nodes whose whole subtree was checked.
 * A half-checked parent (only some children chosen) is not one of them; its chosen children are.
 */
export function topmostFullyChecked(forest: readonly Node[], checked: ReadonlySet<number>): number[] {
  const out: number[] = [];
  const full = (n: Node): boolean => checked.has(n.id) && n.children.every(full);
  const walk = (n: Node) => {
    if (full(n)) out.push(n.id);
    else n.children.forEach(walk);
  };
  forest.forEach(walk);
  return out;
}

/** Our scope orgs (each with everything below it) → the keys a linked picker shows checked. */
export function withDescendants(forest: readonly Node[], roots: ReadonlySet<number>): number[] {
  const out: number[] = [];
  const walk = (n: Node, inside: boolean) => {
    const now = inside || roots.has(n.id);
    if (now) out.push(n.id);
    n.children.forEach((c) => walk(c, now));
  };
  forest.forEach((n) => walk(n, false));
  return out;
}
