import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { locateFrontmatter } from "./frontmatter-locate.js";

const encode = (text: string) => Buffer.from(text, "utf8");

function locate(text: string) {
  const bytes = encode(text);
  const found = locateFrontmatter(bytes, bytes.length, true);
  return found.kind === "found"
    ? { kind: found.kind, yaml: bytes.toString("utf8", found.yamlStart, found.yamlEnd), body: bytes.toString("utf8", found.bodyStart) }
    : found;
}

describe("locateFrontmatter", () => {
  it("finds the YAML between the opening and closing --- lines", () => {
    expect(locate("---\nname: a\n---\nbody\n")).toEqual({ kind: "found", yaml: "name: a", body: "body\n" });
    expect(locate("\ufeff---\r\nname: a\r\n---\r\nbody")).toEqual({ kind: "found", yaml: "name: a", body: "body" });
    expect(locate("---\n---\n")).toEqual({ kind: "found", yaml: "", body: "" });
    expect(locate("---  \nname: a\n---")).toEqual({ kind: "found", yaml: "name: a", body: "" });
  });

  it("needs the closing line to be exactly ---", () => {
    expect(locate("---\nname: a\n----\nmore\n")).toEqual({ kind: "open" });
    expect(locate("---\nname: a\n--- x\n")).toEqual({ kind: "open" });
  });

  it("reports a file without frontmatter and an unterminated one", () => {
    expect(locate("# Title\n")).toEqual({ kind: "missing" });
    expect(locate("----\n")).toEqual({ kind: "missing" });
    expect(locate("")).toEqual({ kind: "missing" });
    expect(locate("---\nname: a\n")).toEqual({ kind: "open" });
    expect(locate("---")).toEqual({ kind: "open" });
  });

  it("gives the same answer from any prefix that holds the closing line, and 'open' before it", () => {
    const yamlLine = fc.stringMatching(/^[a-z]{1,6}: [^\n\r-][^\n\r]{0,20}$/);
    fc.assert(
      fc.property(fc.array(yamlLine, { maxLength: 5 }), fc.string({ maxLength: 40 }), fc.nat(), (lines, body, cut) => {
        const yaml = lines.join("\n");
        const text = `---\n${yaml}${lines.length > 0 ? "\n" : ""}---\n${body}`;
        const bytes = encode(text);
        const whole = locateFrontmatter(bytes, bytes.length, true);
        expect(whole.kind).toBe("found");
        if (whole.kind !== "found") return;
        expect(bytes.toString("utf8", whole.yamlStart, whole.yamlEnd)).toBe(yaml);
        const length = cut % (bytes.length + 1);
        const partial = locateFrontmatter(bytes, length, false);
        if (partial.kind === "found") expect(partial).toEqual(whole);
        else expect(partial.kind).toBe("open");
        if (length < whole.bodyStart) expect(partial.kind).toBe("open");
      }),
    );
  });
});
