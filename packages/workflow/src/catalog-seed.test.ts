import { describe, expect, it } from "vitest";
import { makeEngine } from "../../../test/support/workflow-harness.js";
import { createCatalog, type DefinitionSet } from "./index.js";
import { BUILTIN_DEFINITIONS } from "./schemas.js";

const SEED_SKILL_IDS = [
  "repository-discovery",
  "context-summary",
  "issue-analysis",
  "implementation-planning",
  "implementation-proposal",
  "code-review",
  "test-failure-analysis",
  "security-review",
  "resource-review",
  "performance-review",
  "documentation-review",
  "release-review",
  "ui-ux-review",
  "architecture-review",
  "maintainability-review",
];
const SEED_ROLE_IDS = [
  "repository-explorer",
  "planner",
  "code-reviewer",
  "test-engineer",
  "security-reviewer",
  "product-reviewer",
  "architect",
  "ux-reviewer",
  "maintainability-reviewer",
  "performance-reviewer",
  "implementation-advisor",
  "documentation-reviewer",
];

/** A project workflow built only from the bridge's roles and skills. */
const seedFlow = (): DefinitionSet => ({
  workflows: [
    {
      schemaVersion: 1,
      id: "bridge_review",
      version: "1.0.0",
      description: "discover, review for security and UX, decide",
      kind: "review",
      reviseFrom: "discover",
      stages: [
        { id: "discover", kind: "local", role: "repository-explorer", skills: ["repository-discovery", "context-summary"] },
        { id: "security", kind: "local", role: "security-reviewer", skills: ["security-review"], originalEvidence: true },
        { id: "ux", kind: "local", role: "ux-reviewer", skills: ["ui-ux-review"], reads: ["discover"] },
        { id: "decide", kind: "checkpoint", final: true },
      ],
    },
  ],
  profiles: [
    {
      schemaVersion: 1,
      id: "no-ux",
      version: "1.0.0",
      description: "a project without a UI",
      disableRoles: ["ux-reviewer"],
      roleOverrides: { "security-reviewer": { minimumStrength: 70 } },
    },
  ],
});

describe("the bridge's built-in catalog", () => {
  it("has its 15 skills and 12 roles, each at schema version 1 with an id, a version and real instructions", () => {
    const catalog = createCatalog()._unsafeUnwrap();
    for (const id of SEED_SKILL_IDS) {
      const skill = catalog.skills.get(id);
      expect(skill, id).toMatchObject({ schemaVersion: 1, id, version: "1.0.0" });
      expect(skill!.instructions.length, id).toBeGreaterThan(80);
      expect(skill!.instructions, id).toMatch(/Output:|output/i);
    }
    for (const id of SEED_ROLE_IDS) {
      const role = catalog.roles.get(id);
      expect(role, id).toMatchObject({ schemaVersion: 1, id, version: "1.0.0" });
      for (const skill of role!.skills) expect(catalog.skills.has(skill), `${id} → ${skill}`).toBe(true);
    }
    const builtinSkills = BUILTIN_DEFINITIONS.skills.map((skill) => skill.id);
    const builtinRoles = BUILTIN_DEFINITIONS.roles.map((role) => role.id);
    expect(builtinSkills).toEqual(expect.arrayContaining(SEED_SKILL_IDS));
    expect(builtinRoles).toEqual(expect.arrayContaining(SEED_ROLE_IDS));
    expect(new Set(builtinSkills).size).toBe(builtinSkills.length);
    expect(new Set(builtinRoles).size).toBe(builtinRoles.length);
  });

  it("a project workflow composes the bridge's roles, and a profile disables or tightens them", async () => {
    const { engine } = makeEngine({ definitions: seedFlow() });
    const task = { taskId: "bridge", objective: "review the settings screen", workflow: "bridge_review", evidence: { diff: "+<button>Save</button>" } };
    const plain = (await engine.plan(task))._unsafeUnwrap();
    expect(plain.roles.sort()).toEqual(["repository-explorer", "security-reviewer", "ux-reviewer"]);
    const profiled = (await engine.plan({ ...task, taskId: "bridge-2", profile: "no-ux" }))._unsafeUnwrap();
    expect(profiled.stages.map((stage) => `${stage.id}:${stage.status}`)).toEqual(["discover:pending", "security:pending", "ux:skipped", "decide:pending"]);
    expect(profiled.stages[2]).toMatchObject({ skipReason: "role_disabled" });
  });

  it("only the roles a workflow selects run", async () => {
    const { engine, calls } = makeEngine({ definitions: seedFlow() });
    const run = (await engine.start({ taskId: "bridge", objective: "review the settings screen", workflow: "bridge_review", profile: "no-ux", evidence: { diff: "+<button>Save</button>" } }))._unsafeUnwrap();
    const step = (await engine.step(run.runId, { version: 1 }))._unsafeUnwrap();
    expect(step.status.status).toBe("awaiting_checkpoint");
    expect(calls.map((call) => `${call.role}/${call.skill}`)).toEqual(["repository-explorer/repository-discovery", "repository-explorer/context-summary", "security-reviewer/security-review"]);
    // The profile's override tightened the role: the security review ran on a model of strength 70 or more.
    expect(calls[2]!.model.strength).toBeGreaterThanOrEqual(70);
    const review = (await engine.plan({ taskId: "other", objective: "review", workflow: "review_change", evidence: { diff: "+x" } }))._unsafeUnwrap();
    expect(review.roles.sort()).toEqual(["explorer", "reviewer"]);
  });
});
