import { describe, expect, it } from "vitest";
import { entry, viewOf } from "./__fixtures__/skill-tree.js";
import { SKILL_BACKEND_IDS, skillArgsFor, skillDeliveryFor } from "./skill-delivery.js";

const view = viewOf([entry({ name: "build" }), entry({ name: "test" }), entry({ name: "plan", role: "planner" })]);

describe("skill delivery per backend", () => {
  it("knows every backend of the adapters, each with one mode", () => {
    expect(SKILL_BACKEND_IDS).toEqual(["claude-code", "codex", "pi", "opencode", "copilot", "cursor", "gemini", "grok", "qoder", "deepseek", "scripted"]);
    const modes = Object.fromEntries(SKILL_BACKEND_IDS.map((id) => [id, skillDeliveryFor(id)._unsafeUnwrap()]));
    expect(modes).toEqual({
      "claude-code": "native",
      codex: "staged",
      pi: "native",
      opencode: "native",
      copilot: "staged",
      cursor: "staged",
      gemini: "staged",
      grok: "staged",
      qoder: "prompt",
      deepseek: "prompt",
      scripted: "prompt",
    });
  });

  it("gives pi --no-skills and one --skill per OWN skill", () => {
    expect(skillArgsFor("pi", view)._unsafeUnwrap()).toEqual({
      backend: "pi",
      mode: "native",
      args: ["--no-skills", "--skill", "/skills/project/engineer/build/SKILL.md", "--skill", "/skills/project/engineer/test/SKILL.md"],
      skillPaths: ["/skills/project/engineer/build/SKILL.md", "/skills/project/engineer/test/SKILL.md"],
      stageInto: null,
    });
    expect(skillArgsFor("pi", viewOf([entry({ name: "plan", role: "planner" })]))._unsafeUnwrap().args).toEqual(["--no-skills"]);
  });

  it("tells staged backends what to link where, other native backends the paths, and prompt backends nothing", () => {
    expect(skillArgsFor("codex", view)._unsafeUnwrap()).toEqual({
      backend: "codex",
      mode: "staged",
      args: [],
      skillPaths: ["/skills/project/engineer/build/SKILL.md", "/skills/project/engineer/test/SKILL.md"],
      stageInto: ".agents/skills",
    });
    expect(skillArgsFor("claude-code", view)._unsafeUnwrap()).toEqual({
      backend: "claude-code",
      mode: "native",
      args: [],
      skillPaths: ["/skills/project/engineer/build/SKILL.md", "/skills/project/engineer/test/SKILL.md"],
      stageInto: null,
    });
    expect(skillArgsFor("qoder", view)._unsafeUnwrap()).toEqual({ backend: "qoder", mode: "prompt", args: [], skillPaths: [], stageInto: null });
  });

  it("refuses an unknown backend or a malformed view with invalid_input", () => {
    expect(skillDeliveryFor("vim")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(skillArgsFor("vim", view)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(skillArgsFor("pi", { role: "x", own: [{}] } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
