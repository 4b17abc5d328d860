import { createCapacityGate, type CapacityStatus } from "@keel/budget";
import { KeelError } from "@keel/core";
import { errAsync, ok, okAsync } from "neverthrow";
import { describe, expect, it } from "vitest";

const source = (status: Partial<CapacityStatus> & Record<string, unknown>) => ({
  status: () => ({ state: "open", toolCalls: 0, activeMinutes: 0, checkpointCounter: 3, ...status }),
});

describe("createCapacityGate", () => {
  it("admits a task without a budget without asking the session, even when none is open", async () => {
    let asked = 0;
    const gate = createCapacityGate({ sessions: { status: () => (asked++, { state: "no_session", toolCalls: 0, activeMinutes: 0 }) } });
    expect((await gate.admit({ taskId: "t1" }))._unsafeUnwrap()).toEqual({ admitted: true, reason: "no_budget", remaining: null });
    expect((await gate.admit({ taskId: "t1", budget: null }))._unsafeUnwrap().reason).toBe("no_budget");
    expect(asked).toBe(0);
  });

  it("refuses a budgeted task with no_session when no work session is open, and says how to recover", async () => {
    const gate = createCapacityGate({ sessions: source({ state: "no_session" }) });
    const refused = (await gate.admit({ taskId: "t1", budget: { tokens: 1_000 } }))._unsafeUnwrapErr();
    expect(refused.code).toBe("no_session");
    expect(refused.details).toMatchObject({ taskId: "t1" });
    expect(String(refused.details["recovery"])).toContain("open a work session");
    expect((await gate.remaining())._unsafeUnwrapErr().code).toBe("no_session");
  });

  it("admits a budgeted task within capacity and tells what is left", async () => {
    const gate = createCapacityGate({ sessions: source({ toolCalls: 150, activeMinutes: 100 }) });
    expect((await gate.admit({ taskId: "t1", budget: {} }))._unsafeUnwrap()).toEqual({
      admitted: true,
      reason: "within_capacity",
      remaining: { toolCalls: 50, activeMinutes: 80 },
    });
  });

  it("refuses with capacity_refused naming the tool-call limit and its value", async () => {
    const gate = createCapacityGate({ sessions: source({ toolCalls: 200, activeMinutes: 10 }) });
    const refused = (await gate.admit({ taskId: "t2", budget: { calls: 3 } }))._unsafeUnwrapErr();
    expect(refused.code).toBe("capacity_refused");
    expect(refused.details).toMatchObject({ taskId: "t2", limit: "maxToolCalls", value: 200, current: 200 });
    expect(refused.details["recovery"]).toBeTruthy();
  });

  it("never counts unknown tool calls as 0: remaining tool calls are unknown, reported ones still bind, minutes decide", async () => {
    const unknown = createCapacityGate({ sessions: source({ toolCalls: null, turnsWithoutToolCalls: 4, activeMinutes: 100 }) });
    expect((await unknown.admit({ taskId: "t1", budget: {} }))._unsafeUnwrap().remaining).toEqual({ toolCalls: null, activeMinutes: 80 });
    const partial = createCapacityGate({ sessions: source({ toolCalls: 120, turnsWithoutToolCalls: 1, activeMinutes: 10 }) });
    expect((await partial.remaining())._unsafeUnwrap()).toEqual({ toolCalls: null, activeMinutes: 170 });
    // A lower bound that reaches the limit has reached it.
    const reached = createCapacityGate({ sessions: source({ toolCalls: 200, turnsWithoutToolCalls: 2, activeMinutes: 10 }) });
    expect((await reached.admit({ taskId: "t1", budget: {} }))._unsafeUnwrapErr().details).toMatchObject({ limit: "maxToolCalls", current: 200 });
    // With the count unknown, active minutes still refuse.
    const late = createCapacityGate({ sessions: source({ toolCalls: null, turnsWithoutToolCalls: 9, activeMinutes: 180 }) });
    expect((await late.admit({ taskId: "t1", budget: {} }))._unsafeUnwrapErr().details).toMatchObject({ limit: "maxActiveMinutes" });
  });

  it("refuses with capacity_refused naming the active-minute limit and its value", async () => {
    const gate = createCapacityGate({ sessions: source({ toolCalls: 3, activeMinutes: 61 }), maxActiveMinutes: 60, maxToolCalls: 10 });
    const refused = (await gate.admit({ taskId: "t3", budget: { tokens: 1 } }))._unsafeUnwrapErr();
    expect(refused.code).toBe("capacity_refused");
    expect(refused.details).toMatchObject({ limit: "maxActiveMinutes", value: 60, current: 61 });
  });

  it("reads a status given as a promise, a Result or a ResultAsync", async () => {
    const status = { state: "open" as const, toolCalls: 1, activeMinutes: 1 };
    for (const sessions of [
      { status: async () => status },
      { status: () => ok(status) },
      { status: () => okAsync(status) },
    ]) {
      expect((await createCapacityGate({ sessions }).admit({ taskId: "t", budget: {} }))._unsafeUnwrap().reason).toBe("within_capacity");
    }
  });

  it("passes on a failing session source as an error, never as admission", async () => {
    const failing = [
      { status: () => errAsync(new KeelError("io_failed", "disk")) },
      { status: () => Promise.reject(new Error("boom")) },
      {
        status: () => {
          throw new Error("sync boom");
        },
      },
    ];
    const codes = [];
    for (const sessions of failing) codes.push((await createCapacityGate({ sessions }).admit({ taskId: "t", budget: {} }))._unsafeUnwrapErr().code);
    expect(codes).toEqual(["io_failed", "unavailable", "unavailable"]);
    const malformed = createCapacityGate({ sessions: { status: () => ({ state: "maybe", toolCalls: -1 }) } });
    expect((await malformed.admit({ taskId: "t", budget: {} }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("validates options at once and requests per call", async () => {
    for (const options of [{}, { sessions: {} }, { sessions: source({}), maxToolCalls: 0 }, { sessions: source({}), maxActiveMinutes: -1 }]) {
      expect(() => createCapacityGate(options as never)).toThrowError(expect.objectContaining({ code: "invalid_input" }));
    }
    const gate = createCapacityGate({ sessions: source({}) });
    expect((await gate.admit({ taskId: "" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await gate.admit({ taskId: "t", budget: { tokens: -1 } }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });

  it("reads a no_session status without counters (none is taken for 0) and says the host's own recovery", async () => {
    const gate = createCapacityGate({
      sessions: { status: () => ({ state: "no_session" }) },
      recovery: { noSession: "call keel.openWorkSession({ missionId, model })", capacityRefused: "close and reopen" },
    });
    const refused = (await gate.admit({ taskId: "t1", budget: {} }))._unsafeUnwrapErr();
    expect(refused.code).toBe("no_session");
    expect(refused.message).toContain("keel.openWorkSession");
    expect(refused.details["recovery"]).toBe("call keel.openWorkSession({ missionId, model })");
    const full = createCapacityGate({ sessions: source({ toolCalls: 5 }), maxToolCalls: 5, recovery: { capacityRefused: "close and reopen" } });
    expect((await full.admit({ taskId: "t1", budget: {} }))._unsafeUnwrapErr().details).toMatchObject({ limit: "maxToolCalls", value: 5, recovery: "close and reopen" });
    // An open session must give its counters.
    const missing = createCapacityGate({ sessions: { status: () => ({ state: "open" }) } });
    expect((await missing.admit({ taskId: "t1", budget: {} }))._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});
