/** A node of a text tree: one line of label, then its children indented below it. */
export interface TreeNode {
  /** The node's line (already printable and, if wanted, painted). */
  label: string;
  children?: TreeNode[];
}

/**
 * Renders a tree with box-drawing guides, one line per node, depth-first in order:
 *
 * ```
 * root
 * ├─ a
 * │  └─ a1
 * └─ b
 * ```
 *
 * Pure. A label with a newline would break the guides: make labels printable first.
 */
export function renderTree(root: TreeNode): string[] {
  const lines: string[] = [root.label];
  const walk = (children: readonly TreeNode[], indent: string) => {
    children.forEach((child, index) => {
      const last = index === children.length - 1;
      lines.push(`${indent}${last ? "└─ " : "├─ "}${child.label}`);
      walk(child.children ?? [], `${indent}${last ? "   " : "│  "}`);
    });
  };
  walk(root.children ?? [], "");
  return lines;
}
