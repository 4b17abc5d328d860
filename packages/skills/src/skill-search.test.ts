import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entry, viewOf } from "./__fixtures__/skill-tree.js";
import { searchSkills, searchTerms } from "./skill-search.js";

const view = viewOf([
  entry({ name: "pdf-forms", description: "Fill and check PDF forms. Use when a PDF form must be completed." }),
  entry({ name: "release-notes", description: "Write release notes from merged pull requests." }),
  entry({ name: "deploy", description: "Deploy the service to staging.", relativePath: "ops/deploy" }),
  entry({ name: "changelog", description: "Write release notes from merged pull requests.", role: "planner" }),
  entry({ name: "pdf-export", description: "Export reports as PDF files.", role: "planner" }),
]);
const names = (query: string) => searchSkills(view, query)._unsafeUnwrap().map((hit) => hit.skill.name);

describe("searchSkills", () => {
  it("ranks name matches above description matches and returns entries, not bodies", () => {
    expect(names("pdf")).toEqual(["pdf-forms", "pdf-export"]);
    expect(names("pdf forms")[0]).toBe("pdf-forms");
    const hit = searchSkills(view, "deploy")._unsafeUnwrap()[0];
    expect(hit?.skill).toBe(view.skills[2]);
    expect(hit).not.toHaveProperty("text");
  });

  it("puts OWN before REFERENCE at equal score", () => {
    expect(names("release notes merged")).toEqual(["release-notes", "changelog"]);
    expect(names("merged pull requests")).toEqual(["release-notes", "changelog"]);
  });

  it("matches the skill's path below its root, word prefixes and is case-insensitive", () => {
    expect(names("OPS")).toEqual(["deploy"]);
    expect(names("stag")).toEqual(["deploy"]);
    expect(names("zebra")).toEqual([]);
    expect(names("!!!")).toEqual([]);
  });

  it("honours the limit and refuses bad input with invalid_input", () => {
    expect(searchSkills(view, "pdf", { limit: 1 })._unsafeUnwrap()).toHaveLength(1);
    expect(searchSkills(view, "")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(searchSkills(view, "x".repeat(1001))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(searchSkills(view, "pdf", { limit: 0 })._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(searchSkills({ skills: [{ name: 1 }] } as never, "pdf")._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("always returns positive scores in rank order, with only query terms as matches", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (query) => {
        const hits = searchSkills(view, query, { limit: 100 })._unsafeUnwrap();
        const terms = searchTerms(query);
        for (let index = 0; index < hits.length; index++) {
          const hit = hits[index]!;
          expect(hit.score).toBeGreaterThan(0);
          expect(hit.matched.every((term) => terms.includes(term))).toBe(true);
          const next = hits[index + 1];
          if (next) {
            expect(hit.score >= next.score).toBe(true);
            if (hit.score === next.score && hit.skill.ownership !== next.skill.ownership) expect(hit.skill.ownership).toBe("own");
          }
        }
      }),
    );
  });
});
