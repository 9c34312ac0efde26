/** Builds a forest from flat rows by parentId (0 = root); rows whose parent is absent become roots. */
export function buildTree<T extends { id: number; parentId: number }>(rows: readonly T[]): (T & { children: (T & { children: unknown[] })[] })[] {
  type Node = T & { children: Node[] };
  const byId = new Map<number, Node>();
  for (const r of rows) byId.set(r.id, { ...r, children: [] });
  const roots: Node[] = [];
  for (const node of byId.values()) {
    const parent = node.parentId === 0 ? undefined : byId.get(node.parentId);
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}
