import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkFrontmatter, nameProblems, splitAllowedTools } from "./frontmatter-check.js";

const validName = fc.stringMatching(/^[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,4}$/).filter((name) => name.length <= 64);
const anyData = fc.oneof(
  fc.constant(null),
  fc.constant([1, 2]),
  fc.constant("text"),
  fc.record(
    {
      name: fc.oneof(validName, fc.string({ maxLength: 70 }), fc.integer()),
      description: fc.oneof(fc.string({ maxLength: 1100 }), fc.constant(""), fc.integer()),
      license: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
      compatibility: fc.oneof(fc.string({ maxLength: 600 })),
      metadata: fc.oneof(fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null))), fc.string()),
      "allowed-tools": fc.oneof(fc.string({ maxLength: 30 }), fc.array(fc.string()), fc.integer()),
      author: fc.string(),
    },
    { requiredKeys: [] },
  ),
);

describe("nameProblems", () => {
  it("accepts every spec-valid name", () => {
    fc.assert(
      fc.property(validName, (name) => {
        expect(nameProblems(name)).toEqual([]);
      }),
    );
  });

  it("rejects uppercase, other characters, edge or double hyphens and names over 64 characters", () => {
    fc.assert(
      fc.property(validName, fc.constantFrom("A", "_", " ", ".", "/", "é".toUpperCase()), fc.nat(), (name, bad, at) => {
        const index = at % (name.length + 1);
        expect(nameProblems(name.slice(0, index) + bad + name.slice(index)).length).toBeGreaterThan(0);
      }),
    );
    for (const name of ["-a", "a-", "a--b", "", "a".repeat(65)]) expect(nameProblems(name).length).toBeGreaterThan(0);
    expect(nameProblems("a".repeat(64))).toEqual([]);
    expect(nameProblems("café")).toEqual([]);
  });
});

describe("checkFrontmatter", () => {
  it("loads a spec-valid frontmatter with every field typed and no issue", () => {
    const verdict = checkFrontmatter(
      {
        name: "pdf-tools",
        description: "  Fill PDF\n forms.  Use when a PDF form is given. ",
        license: "Apache-2.0",
        compatibility: "Needs poppler",
        metadata: { author: "x", version: 2, beta: true },
        "allowed-tools": "Bash(git status:*) Read, Edit",
      },
      "pdf-tools",
      "strict",
    );
    expect(verdict.issues).toEqual([]);
    expect(verdict.fields).toEqual({
      name: "pdf-tools",
      description: "Fill PDF forms. Use when a PDF form is given.",
      license: "Apache-2.0",
      compatibility: "Needs poppler",
      metadata: { author: "x", beta: "true", version: "2" },
      allowedTools: ["Bash(git status:*)", "Read", "Edit"],
      disableModelInvocation: false,
    });
  });

  it("strict mode gives the same issues as lenient mode, every one an error", () => {
    fc.assert(
      fc.property(anyData, validName, (data, directory) => {
        const lenient = checkFrontmatter(data, directory, "lenient");
        const strict = checkFrontmatter(data, directory, "strict");
        expect(strict.issues.map((issue) => issue.code)).toEqual(lenient.issues.map((issue) => issue.code));
        expect(strict.issues.every((issue) => issue.severity === "error")).toBe(true);
        expect(strict.fields === null).toBe(strict.issues.length > 0);
      }),
    );
  });

  it("lenient mode skips a skill only for an error, and an error always skips it", () => {
    fc.assert(
      fc.property(anyData, validName, (data, directory) => {
        const verdict = checkFrontmatter(data, directory, "lenient");
        const hasError = verdict.issues.some((issue) => issue.severity === "error");
        expect(verdict.fields === null).toBe(hasError);
        for (const issue of verdict.issues) {
          const fatal = ["missing_description", "invalid_description", "invalid_yaml"].includes(issue.code);
          expect(issue.severity).toBe(fatal ? "error" : "warning");
        }
      }),
    );
  });

  it("names each problem with a stable code", () => {
    const codes = (data: unknown, directory = "dir", mode: "strict" | "lenient" = "lenient") =>
      checkFrontmatter(data, directory, mode).issues.map((issue) => issue.code);
    expect(codes({ name: "dir" })).toEqual(["missing_description"]);
    expect(codes({ name: "dir", description: 3 })).toEqual(["invalid_description"]);
    expect(codes({ description: "d" })).toEqual(["missing_name"]);
    expect(codes({ name: "other", description: "d" })).toEqual(["name_mismatch"]);
    expect(codes({ name: "Dir", description: "d" })).toEqual(["invalid_name", "name_mismatch"]);
    expect(codes({ name: "dir", description: "d".repeat(1025) })).toEqual(["description_too_long"]);
    expect(codes({ name: "dir", description: "d", compatibility: "c".repeat(501) })).toEqual(["invalid_field"]);
    expect(codes({ name: "dir", description: "d", metadata: { a: { b: 1 } } })).toEqual(["invalid_field"]);
    expect(codes({ name: "dir", description: "d", "allowed-tools": ["Read"] })).toEqual(["invalid_field"]);
    expect(codes({ name: "dir", description: "d", author: "me", version: 1 })).toEqual(["unknown_field"]);
    expect(codes(["a"])).toEqual(["invalid_yaml"]);
    expect(codes(null)).toEqual(["missing_name", "missing_description"]);
  });

  it("in lenient mode uses the directory name when the name is missing", () => {
    expect(checkFrontmatter({ description: "d" }, "my-skill", "lenient").fields?.name).toBe("my-skill");
    expect(checkFrontmatter({ description: "d", "disable-model-invocation": true }, "x", "lenient").fields?.disableModelInvocation).toBe(true);
  });
});

describe("splitAllowedTools", () => {
  it("splits on spaces and commas outside parentheses", () => {
    expect(splitAllowedTools("Bash(git:*) Bash(jq:*) Read")).toEqual(["Bash(git:*)", "Bash(jq:*)", "Read"]);
    expect(splitAllowedTools("Edit, Write")).toEqual(["Edit", "Write"]);
    expect(splitAllowedTools("Bash(git status, git diff)  Read")).toEqual(["Bash(git status, git diff)", "Read"]);
    expect(splitAllowedTools("   ")).toEqual([]);
  });

  it("keeps every non-separator character, in order", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."ab(), \t:*") }), (text) => {
        const strip = (value: string) => value.replace(/[\s,]/gu, "");
        expect(strip(splitAllowedTools(text).join(""))).toBe(strip(text));
      }),
    );
  });
});
