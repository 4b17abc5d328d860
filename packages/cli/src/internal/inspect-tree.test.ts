import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCount, plural, printable, shortText } from "./inspect-text.js";
import { renderTree, type TreeNode } from "./inspect-tree.js";

const labels = fc.string({ minLength: 1, maxLength: 12 }).map(printable);
const trees: fc.Arbitrary<TreeNode> = fc.letrec<{ node: TreeNode }>((tie) => ({
  node: fc.record({ label: labels, children: fc.oneof({ depthSize: "small" }, fc.constant<TreeNode[]>([]), fc.array(tie("node"), { maxLength: 3 })) }),
})).node;

function flatten(node: TreeNode): string[] {
  return [node.label, ...(node.children ?? []).flatMap(flatten)];
}

describe("renderTree", () => {
  it("draws guides for siblings and last children", () => {
    const tree: TreeNode = { label: "root", children: [{ label: "a", children: [{ label: "a1" }] }, { label: "b" }] };
    expect(renderTree(tree)).toEqual(["root", "├─ a", "│  └─ a1", "└─ b"]);
  });

  it("prints one line per node, depth-first, each label after its guide", () => {
    fc.assert(
      fc.property(trees, (tree) => {
        const lines = renderTree(tree);
        const expected = flatten(tree);
        expect(lines).toHaveLength(expected.length);
        lines.forEach((line, index) => {
          expect(line.endsWith(expected[index]!)).toBe(true);
          expect(line.slice(0, line.length - expected[index]!.length)).toMatch(/^(│  |   )*(├─ |└─ )?$/);
        });
      }),
    );
  });
});

describe("printable", () => {
  it("leaves no control character, and leaves text without them as it is", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const shown = printable(text);
        expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
        if (!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text)) expect(shown).toBe(text);
      }),
    );
  });

  it("escapes newlines, tabs and escape sequences visibly", () => {
    expect(printable("a\nb\tc\u001b[2J")).toBe("a\\nb\\tc\\u001b[2J");
  });

  it("shortText never exceeds its bound", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 50 }), (text, max) => {
        expect(shortText(text, max).length).toBeLessThanOrEqual(Math.max(max, 1));
      }),
    );
  });

  it("counts with separators and plurals", () => {
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(plural(1, "turn")).toBe("1 turn");
    expect(plural(2, "entry", "entries")).toBe("2 entries");
  });
});
