import { KeelError, estimateTokens } from "@keel/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withHostileField } from "../../../../test/support/hostile.js";
import { planRoleTurn, type TurnPlanSettings } from "./turn-plan.js";

/** Backends stand for themselves here: the plan only picks one. */
const settings = (overrides: Partial<TurnPlanSettings<string>> = {}): TurnPlanSettings<string> => ({
  backends: new Map([
    ["codex", "codex-backend"],
    ["claude", "claude-backend"],
  ]),
  defaultBackend: "codex",
  limits: {},
  reserveOutputTokens: 4096,
  turnTimeoutMs: 600_000,
  ...overrides,
});

const turn = { missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" };

describe("planRoleTurn", () => {
  it("picks the default backend, the mission and role scopes, and reserves the estimate plus the output reserve", () => {
    const planned = planRoleTurn(turn, settings({ limits: { mission: { tokens: 1000 } } }))._unsafeUnwrap();
    expect(planned.backendId).toBe("codex");
    expect(planned.backend).toBe("codex-backend");
    expect(planned.scopes).toEqual([
      { id: "mission.m1", limits: { tokens: 1000 } },
      { id: "role.engineer", limits: null },
    ]);
    expect(planned.reserve).toEqual({ tokens: estimateTokens("Ship --json\nAdd the flag.") + 4096, calls: 1, timeMs: 600_000 });
  });

  it("binds a declared budget to the task's own scope under the role's", () => {
    const withTask = planRoleTurn({ ...turn, backend: "claude", budget: { calls: 3 }, taskId: "t-7" }, settings())._unsafeUnwrap();
    expect(withTask.backendId).toBe("claude");
    expect(withTask.scopes.map((scope) => scope.id)).toEqual(["mission.m1", "role.engineer", "task.m1.t-7"]);
    expect(withTask.scopes[2]?.limits).toEqual({ calls: 3 });
    const withoutTaskId = planRoleTurn({ ...turn, budget: { calls: 3 } }, settings())._unsafeUnwrap();
    expect(withoutTaskId.scopes[2]?.id).toBe("task.m1.engineer");
  });

  it("refuses a backend that is not configured, and any backend when none is", () => {
    const unknown = planRoleTurn({ ...turn, backend: "gemini" }, settings())._unsafeUnwrapErr();
    expect(unknown.code).toBe("invalid_input");
    expect(unknown.details).toEqual({ backend: "gemini", configured: ["codex", "claude"] });
    const none = planRoleTurn(turn, settings({ backends: new Map(), defaultBackend: undefined }))._unsafeUnwrapErr();
    expect(none.code).toBe("invalid_input");
    expect(none.details).toEqual({ backend: null, configured: [] });
  });

  it("refuses an unsafe mission id or role before choosing a backend", () => {
    for (const bad of [{ ...turn, role: "eng/../x" }, { ...turn, missionId: "" }, { ...turn, prompt: "" }]) {
      const error = planRoleTurn({ ...bad, backend: "gemini" }, settings())._unsafeUnwrapErr();
      expect(error.code).toBe("invalid_input");
      expect(error.details).not.toHaveProperty("configured");
    }
  });

  it("is total and deterministic: any safe turn plans the same twice, with safe scope ids", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/).filter((value) => !value.includes(".."));
    fc.assert(
      fc.property(name, name, fc.string({ minLength: 1, maxLength: 2000 }), fc.option(name, { nil: undefined }), (missionId, role, prompt, taskId) => {
        const input = { missionId, role, prompt, budget: { tokens: 10 }, ...(taskId === undefined ? {} : { taskId: taskId.slice(0, 200) }) };
        const first = planRoleTurn(input, settings())._unsafeUnwrap();
        expect(planRoleTurn(input, settings())._unsafeUnwrap()).toEqual(first);
        expect(first.scopes).toHaveLength(3);
        for (const scope of first.scopes) expect(scope.id.length).toBeLessThanOrEqual(128);
        expect(first.reserve.tokens).toBeGreaterThanOrEqual(4096);
      }),
      { numRuns: 200 },
    );
  });

  it("answers any hostile field with a plan or invalid_input, never a throw", () => {
    fc.assert(
      fc.property(withHostileField({ ...turn, budget: { tokens: 10 }, taskId: "t1", backend: "codex" }), (input) => {
        const planned = planRoleTurn(input, settings());
        if (planned.isErr()) {
          expect(KeelError.is(planned.error)).toBe(true);
          expect(planned.error.code).toBe("invalid_input");
        } else expect(planned.value.backend).toBe("codex-backend");
      }),
      { numRuns: 200 },
    );
  });
});
