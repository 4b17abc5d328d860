import { utf8Bytes } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entry, viewOf } from "./__fixtures__/skill-tree.js";
import { renderSkillContract, SKILL_RULES } from "./skill-contract.js";

const view = viewOf([
  entry({ name: "build", description: "Build the project with make." }),
  entry({ name: "hidden", description: "Manual only.", disableModelInvocation: true }),
  entry({ name: "plan", description: "Plan the work.", role: "planner" }),
  entry({ name: "lint", description: "Lint the code.", root: "/skills/global/engineer", layer: "global" }),
]);

describe("renderSkillContract", () => {
  it("lists the rules, the ordered roots marked OWN/REFERENCE and the catalogue, OWN skills first", () => {
    const text = renderSkillContract(view)._unsafeUnwrap();
    for (const rule of SKILL_RULES) expect(text).toContain(rule);
    const rootLines = text.split("\n").filter((line) => /^\d+\. /.test(line));
    expect(rootLines).toEqual([
      "1. OWN /skills/project/engineer (layer project, role engineer)",
      "2. REFERENCE /skills/project/planner (layer project, role planner)",
      "3. OWN /skills/global/engineer (layer global, role engineer)",
    ]);
    const catalogue = text.split("\n").filter((line) => line.startsWith("- ") && line.endsWith("SKILL.md)"));
    expect(catalogue).toEqual([
      "- build: Build the project with make. (/skills/project/engineer/build/SKILL.md)",
      "- lint: Lint the code. (/skills/global/engineer/lint/SKILL.md)",
      "- plan: Plan the work. (/skills/project/planner/plan/SKILL.md)",
    ]);
    expect(text.indexOf("OWN skills:")).toBeLessThan(text.indexOf("REFERENCE skills:"));
    expect(text).not.toContain("hidden");
  });

  it("is stable: the same view gives the same text", () => {
    expect(renderSkillContract(view)._unsafeUnwrap()).toBe(renderSkillContract(structuredClone(view))._unsafeUnwrap());
  });

  it("lists only the roots when the catalogue does not fit, then only the roots that fit", () => {
    const full = renderSkillContract(view)._unsafeUnwrap();
    const rootsOnly = renderSkillContract(view, { maxBytes: utf8Bytes(full) - 1 })._unsafeUnwrap();
    expect(rootsOnly).toContain("1. OWN /skills/project/engineer");
    expect(rootsOnly).not.toContain("build/SKILL.md");
    expect(rootsOnly).toContain("4 skills, too many to list here");
    const fewer = renderSkillContract(view, { maxBytes: utf8Bytes(rootsOnly) - 10 })._unsafeUnwrap();
    expect(fewer).toContain("more roots not listed");
    expect(renderSkillContract(view, { maxBytes: 100 })._unsafeUnwrapErr().code).toBe("too_large");
  });

  it("never exceeds the budget it was given", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4000 }), (maxBytes) => {
        const result = renderSkillContract(view, { maxBytes });
        if (result.isOk()) expect(utf8Bytes(result.value)).toBeLessThanOrEqual(maxBytes);
        else expect(result.error.code).toBe("too_large");
      }),
    );
  });

  it("says so when a role has no skills, and refuses a malformed view or options", () => {
    expect(renderSkillContract(viewOf([]))._unsafeUnwrap()).toContain('No skills are available to role "engineer"');
    expect(renderSkillContract({ role: "x" } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(renderSkillContract(view, { maxBytes: -1 })._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("keeps control characters out of the prompt", () => {
    const odd = viewOf([entry({ name: "odd", path: "/skills/project/engineer/odd\nline/SKILL.md" })]);
    expect(renderSkillContract(odd)._unsafeUnwrap()).toContain("odd line/SKILL.md");
  });
});
