import { buildRolePrompt, readReportLines, readVerdict } from "@keel/runtime";
import { renderInstructions } from "@keel/skills";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

const capsule = {
  repositoryMap: "src/ cli core",
  referencedPaths: ["README.md"],
  inspectedPaths: ["src/cli.ts"],
  decisiveOutput: "add a flag",
  openCheckpointItems: ["tests"],
  objectiveRevision: 2,
};

describe("buildRolePrompt", () => {
  it("sends only the task on a resumed turn", () => {
    const prompt = buildRolePrompt({ role: "engineer", missionId: "m", action: "resumed", task: "Next.", objective: "O", capsule })._unsafeUnwrap();
    expect(prompt).toEqual({ text: "Next.", bytes: 5, sections: ["Task"] });
  });

  it("builds every section of a fresh turn in order", () => {
    const prompt = buildRolePrompt({ role: "engineer", missionId: "m", action: "rotated", task: "Next.", objective: "O", objectiveRevision: 3, capsule, skillContract: "use skills" })._unsafeUnwrap();
    expect(prompt.sections).toEqual(["Role", "Objective", "Where the work stands", "Skills", "Report", "Task"]);
    expect(prompt.text).toContain("## Objective (revision 3)\nO");
    expect(prompt.text).toContain("Open checkpoint items:\n- tests");
    expect(prompt.text.endsWith("## Task\nNext.")).toBe(true);
    expect(prompt.bytes).toBe(Buffer.byteLength(prompt.text));
  });

  it("includes project instructions on a fresh turn (for backends that do not load them), never on a resumed one", () => {
    const instructions = renderInstructions([{ path: "/repo/AGENTS.md", content: "Run pnpm test before committing.\n" }])._unsafeUnwrap();
    const fresh = buildRolePrompt({ role: "engineer", missionId: "m", action: "fresh", task: "Next.", instructions, skillContract: "use skills" })._unsafeUnwrap();
    expect(fresh.sections).toEqual(["Role", "Project instructions", "Skills", "Report", "Task"]);
    expect(fresh.text).toContain('## Project instructions\n<project_instructions>');
    expect(fresh.text).toContain('<instructions path="/repo/AGENTS.md">\nRun pnpm test before committing.\n</instructions>');
    const resumed = buildRolePrompt({ role: "engineer", missionId: "m", action: "resumed", task: "Next.", instructions })._unsafeUnwrap();
    expect(resumed.text).toBe("Next.");
    expect(buildRolePrompt({ role: "engineer", missionId: "m", action: "fresh", task: "Next.", instructions: "" })._unsafeUnwrap().sections).not.toContain("Project instructions");
  });

  it("is pure and never smaller on a fresh turn than on a resumed one (property)", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.option(fc.string()), (task, objective) => {
        const input = { role: "r", missionId: "m", task, objective, capsule: null } as const;
        const fresh = buildRolePrompt({ ...input, action: "fresh" })._unsafeUnwrap();
        const resumed = buildRolePrompt({ ...input, action: "resumed" })._unsafeUnwrap();
        expect(buildRolePrompt({ ...input, action: "fresh" })._unsafeUnwrap()).toEqual(fresh);
        expect(fresh.bytes).toBeGreaterThan(resumed.bytes);
      }),
    );
  });

  it("answers bad input with invalid_input", () => {
    const result = buildRolePrompt({ role: "r", missionId: "m", action: "paused" as never, task: "x" });
    expect(result.isErr() && result.error.code).toBe("invalid_input");
    const empty = buildRolePrompt({ role: "r", missionId: "m", action: "fresh", task: "" });
    expect(empty.isErr() && empty.error.code).toBe("invalid_input");
  });
});

describe("readReportLines and readVerdict", () => {
  it("reads the report lines", () => {
    const report = readReportLines("Text\nDecision: ship it\ninspected: a.ts\nInspected: a.ts\nReferenced: b.md\nOpen: docs\nRepository-Map: src/\n");
    expect(report).toEqual({
      decisiveOutput: "ship it",
      paths: { inspected: ["a.ts"], referenced: ["b.md"] },
      openCheckpointItems: ["docs"],
      repositoryMap: "src/",
    });
    expect(readReportLines("no report")).toEqual({});
  });

  it("reads a verdict or none", () => {
    expect(readVerdict("ok\nVerdict: Request_Changes\n")).toBe("request_changes");
    expect(readVerdict("fine")).toBe("none");
  });
});
