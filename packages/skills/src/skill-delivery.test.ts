import { describe, expect, it } from "vitest";
import { entry, viewOf } from "./__fixtures__/skill-tree.js";
import { SKILL_DELIVERY_MODES, planSkillDelivery } from "./skill-delivery.js";

const view = viewOf([entry({ name: "build" }), entry({ name: "test" }), entry({ name: "plan", role: "planner" })]);
const own = ["/skills/project/engineer/build/SKILL.md", "/skills/project/engineer/test/SKILL.md"];

describe("skill delivery by the backend's declared mode", () => {
  it("native: the OWN skills' paths for the adapter, nothing staged", () => {
    expect(planSkillDelivery("native", view)._unsafeUnwrap()).toEqual({ mode: "native", skillPaths: own, stageInto: null });
  });

  it("staged: the OWN skills' paths and the directory the CLI scans", () => {
    expect(planSkillDelivery("staged", view)._unsafeUnwrap()).toEqual({ mode: "staged", skillPaths: own, stageInto: ".agents/skills" });
  });

  it("prompt: nothing to hand over (the contract goes in the prompt)", () => {
    expect(planSkillDelivery("prompt", view)._unsafeUnwrap()).toEqual({ mode: "prompt", skillPaths: [], stageInto: null });
  });

  it("never hands over REFERENCE skills", () => {
    for (const mode of SKILL_DELIVERY_MODES) {
      expect(planSkillDelivery(mode, view)._unsafeUnwrap().skillPaths.some((path) => path.includes("/planner/"))).toBe(false);
    }
  });

  it("answers an unknown mode or a malformed view with invalid_input", () => {
    expect(planSkillDelivery("vim" as never, view)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(planSkillDelivery("native", { role: "x", own: [{}] } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
