import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideModelPin } from "@keel/sessions";
import { WorkSessionsDocSchema } from "@keel/sessions/schemas";
import { newSessionRecord, withTurn, type WorkSessionTurn } from "./work-session-record.js";
import { viewOf } from "./work-session-status.js";

const model = fc.option(fc.constantFrom("opus", "haiku", "sonnet"), { nil: null });

describe("decideModelPin", () => {
  it("a turn that names no model is unknown in a pinned session, never a mismatch", () => {
    expect(decideModelPin("opus", "opus")).toBe("match");
    expect(decideModelPin("opus", null)).toBe("unknown");
    expect(decideModelPin("opus", "haiku")).toBe("mismatch");
    expect(decideModelPin(null, null)).toBe("match");
    expect(decideModelPin(null, "opus")).toBe("mismatch");
  });

  it("property: total; a mismatch needs a named model that differs; unknown only for a turn that named none", () => {
    fc.assert(
      fc.property(model, model, (pinned, turn) => {
        const check = decideModelPin(pinned, turn);
        expect(check === "mismatch").toBe(turn !== null && turn !== pinned);
        expect(check === "unknown").toBe(turn === null && pinned !== null);
        expect(check === "match").toBe(turn === pinned);
      }),
    );
  });
});

describe("model pinning in a work session", () => {
  const turn = (name: string | null): WorkSessionTurn => ({ startedAt: 0, endedAt: 1, toolCalls: 1, usage: null, model: name, taskId: null });

  it("counts a turn without a model apart, not as a mismatch", () => {
    let session = newSessionRecord("s1", null, "opus", 0);
    for (const name of ["opus", null, null, "haiku"]) session = withTurn(session, turn(name), 60_000);
    expect(viewOf(session)).toMatchObject({ turns: 4, turnsWithoutModel: 2, modelMismatch: { turns: 1, lastModel: "haiku" } });
  });

  it("reads a document written before turnsWithoutModel existed as 0", () => {
    const { turnsWithoutModel: _dropped, ...older } = newSessionRecord("s1", null, "opus", 0);
    const value = { schemaVersion: 1, missionId: "m1", open: [older], closed: [], closedCount: 0, closedSinceAudit: 0, lastAudit: null };
    expect(WorkSessionsDocSchema.parse(value).open[0]?.turnsWithoutModel).toBe(0);
  });
});
