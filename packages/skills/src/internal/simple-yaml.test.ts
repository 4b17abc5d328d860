import fc from "fast-check";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { parseSimpleYaml } from "./simple-yaml.js";

const tricky = [..."abcXYZ019 -_.:#'\"[]{}|>&*!%@,?~`\\/()é漢\t"];
const scalarText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...tricky), maxLength: 24 }),
  fc.constantFrom("true", "False", "null", "~", "1.0", "0x1F", ".inf", "-1", "+2", "1e3", "yes", "no", "2024-01-01", "a: b", "a #b", "a#b", "C#", "x:", ":x"),
  fc.string({ maxLength: 12 }),
);
const value = fc.oneof(
  scalarText,
  scalarText.map((text) => `"${text}"`),
  scalarText.map((text) => `'${text}'`),
  fc.constant(""),
);
const key = fc.oneof(fc.constantFrom("name", "description", "license", "metadata", "allowed-tools", "Name", "x_y", "__proto__", "a b", "1a", "-k"), fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/));
const line = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}: ${v}`) },
  { weight: 1, arbitrary: key.map((k) => `${k}:`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("  ", "    ", " ", "\t"), key, value).map(([indent, k, v]) => `${indent}${k}: ${v}`) },
  { weight: 1, arbitrary: fc.constantFrom("", "# comment", "  # indented comment", "- item", "---", "...", "key:value", "  continuation") },
);
const document = fc.array(line, { maxLength: 8 }).map((lines) => lines.join("\n"));

function yamlOrError(text: string): { value: unknown } | { error: true } {
  try {
    return { value: parse(text, { logLevel: "error" }) };
  } catch {
    return { error: true };
  }
}

describe("parseSimpleYaml (fast path)", () => {
  it("either declines or agrees exactly with the yaml package", () => {
    let accepted = 0;
    fc.assert(
      fc.property(document, (text) => {
        const fast = parseSimpleYaml(text);
        if (fast === undefined) return;
        accepted++;
        const full = yamlOrError(text);
        expect(full).toEqual({ value: fast });
      }),
      { numRuns: 3000 },
    );
    // The property is not vacuous: the fast path took a fair share of the generated documents.
    expect(accepted).toBeGreaterThan(100);
  });

  it("takes the usual SKILL.md frontmatter shapes, so discovery rarely needs the full parser", () => {
    const word = fc.stringMatching(/^[A-Za-z][a-z]{0,9}$/);
    const sentence = fc.array(word, { minLength: 1, maxLength: 12 }).map((words) => `${words.join(" ")}. Use it when asked (for example, to build; or test).`);
    const name = fc.stringMatching(/^[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,8}){0,3}$/);
    fc.assert(
      fc.property(name, sentence, fc.boolean(), (skillName, description, withMetadata) => {
        const text = [`name: ${skillName}`, `description: ${description}`, "license: Apache-2.0", ...(withMetadata ? ["metadata:", "  author: someone", '  version: "1.0"'] : [])].join("\n");
        const fast = parseSimpleYaml(text);
        expect(fast).toBeDefined();
        expect(fast).toEqual(parse(text));
      }),
    );
  });

  it("declines block scalars, flow collections, non-string scalars and duplicate keys", () => {
    for (const text of ["description: |\n  a\n  b", "tools: [a, b]", "version: 1.0", "flag: true", "name: a\nname: b", "a: b: c", "name: x #c", "\tname: x", "metadata:\n  a: 1", "metadata:\n  a:\n    b: c"]) {
      expect(parseSimpleYaml(text)).toBeUndefined();
    }
  });

  it("reads quoted strings and one nested map", () => {
    expect(parseSimpleYaml('name: "a-b"\ndescription: \'x: y\'\nmetadata:\n  k: v\n  other: "2"')).toEqual({
      name: "a-b",
      description: "x: y",
      metadata: { k: "v", other: "2" },
    });
  });
});
