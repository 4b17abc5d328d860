import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEventBus, createManualClock, type KeelEvent, type ManualClock } from "@keel/core";
import { createKeel, type KeelOptions } from "@keel/runtime";
import { createHygiene } from "@keel/sessions";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { createFaultyStore } from "@keel/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { createToolBackend } from "../../../test/support/runtime-work-session-backend.js";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const stores: [string, () => KeelStore][] = [
  ["memory", () => createMemoryStore()],
  [
    "fs",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "keel-work-session-"));
      made.push(dir);
      return createFsStore({ dir });
    },
  ],
];

const handoff = { done: ["parser"], inFlight: [{ task: "lexer", state: "half the tokens" }], nextSteps: ["tests"], warnings: [] };
const budget = { tokens: 100_000 };

function setup(makeStore: () => KeelStore, backendOptions: Partial<Parameters<typeof createToolBackend>[0]> = {}, options: KeelOptions = {}) {
  const clock: ManualClock = createManualClock();
  const events = createEventBus({ clock });
  const seen: KeelEvent[] = [];
  events.on("*", (event) => seen.push(event));
  const store = makeStore();
  const backend = createToolBackend({ clock, ...backendOptions });
  const keel = createKeel({ store, backends: [backend], events, clock, policy: "rolling", ...options });
  const turn = (extra: Record<string, unknown> = {}) =>
    keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Work.", objective: "Ship", model: "opus", ...extra });
  const ofType = <T extends KeelEvent["type"]>(type: T) => seen.filter((event): event is Extract<KeelEvent, { type: T }> => event.type === type);
  return { clock, events, seen, store, backend, keel, turn, ofType };
}

describe.each(stores)("work sessions through createKeel (%s store)", (_name, makeStore) => {
  it("refuses a budgeted turn with no_session naming openWorkSession, runs an unbudgeted one as before", async () => {
    const { keel, backend, turn, ofType } = setup(makeStore);
    const refused = (await turn({ budget, taskId: "t1" }))._unsafeUnwrapErr();
    expect(refused.code).toBe("no_session");
    expect(refused.message).toContain("openWorkSession");
    expect(backend.requests).toHaveLength(0);
    expect(ofType("work.session.refused")).toMatchObject([{ code: "no_session", limit: null, taskId: "t1" }]);
    const plain = (await turn())._unsafeUnwrap();
    expect(plain.workSessionId).toBeNull();
    expect(plain.warnings).toEqual([]);
    expect(backend.requests).toHaveLength(1);
    // Usage is recorded for the turn although no session was open; it is in no session's figures.
    expect(ofType("work.session.turn")).toMatchObject([{ sessionId: null, tokens: 110, toolCalls: 1 }]);
    await keel.close();
  });

  it("admits a budgeted turn into an open session and counts it there; the status comes from the store", async () => {
    const { keel, store, turn, clock } = setup(makeStore, { toolCalls: () => 3, minutes: 2 });
    const opened = (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    expect(opened).toMatchObject({ state: "open", session: { scope: "mission", model: "opus", turns: 0, toolCalls: 0 } });
    const first = (await turn({ budget, taskId: "t1" }))._unsafeUnwrap();
    expect(first.workSessionId).toBe(opened.session!.sessionId);
    (await turn({ budget, taskId: "t1" }))._unsafeUnwrap();
    (await turn({ budget, taskId: "t2" }))._unsafeUnwrap();
    const status = (await keel.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    expect(status.session).toMatchObject({ turns: 3, tasks: 2, toolCalls: 9, checkpointCounter: 9, tokens: 330, turnsWithoutUsage: 0 });
    expect(status.session!.activeMinutes).toBe(6);
    // Another instance over the same store (a restart, or another process) sees the same session.
    const other = createKeel({ store, backends: [createToolBackend({ clock })], clock });
    expect((await other.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap().session).toEqual(status.session);
    (await other.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "More.", budget, model: "opus" }))._unsafeUnwrap();
    expect((await keel.workSession({ missionId: "m1" }))._unsafeUnwrap().session!.turns).toBe(4);
    await keel.close();
  });

  it("refuses past 200 tool calls with capacity_refused naming the limit and its value", async () => {
    const { keel, turn, backend } = setup(makeStore, { toolCalls: () => 50 });
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    for (let index = 0; index < 4; index++) (await turn({ budget }))._unsafeUnwrap();
    const refused = (await turn({ budget }))._unsafeUnwrapErr();
    expect(refused.code).toBe("capacity_refused");
    expect(refused.details).toMatchObject({ limit: "maxToolCalls", value: 200, current: 200 });
    expect(refused.message).toContain("maxToolCalls 200");
    expect(backend.requests).toHaveLength(4);
    // A turn without a budget still runs, and the handoff is writable past the limit.
    (await turn())._unsafeUnwrap();
    expect((await keel.writeHandoff({ missionId: "m1", role: "engineer", handoff }))._unsafeUnwrap().revision).toBe(1);
    const status = (await keel.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    expect(status.exceeded).toEqual(["maxToolCalls"]);
    await keel.close();
  });

  it("refuses past 180 active minutes, leaving idle gaps out; both limits are configurable", async () => {
    const { keel, turn, clock } = setup(makeStore, { minutes: 50, toolCalls: () => 0 });
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    for (let index = 0; index < 3; index++) {
      (await turn({ budget }))._unsafeUnwrap();
      clock.advance(60 * 60_000); // idle between turns: not counted
    }
    expect((await keel.workSession({ missionId: "m1" }))._unsafeUnwrap().session!.activeMinutes).toBe(150);
    (await turn({ budget }))._unsafeUnwrap();
    const refused = (await turn({ budget }))._unsafeUnwrapErr();
    expect(refused.code).toBe("capacity_refused");
    expect(refused.details).toMatchObject({ limit: "maxActiveMinutes", value: 180, current: 200 });
    await keel.close();

    const small = setup(makeStore, { toolCalls: () => 2 }, { workSessions: { maxToolCalls: 3, maxActiveMinutes: 500 } });
    (await small.keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await small.turn({ budget }))._unsafeUnwrap();
    (await small.turn({ budget }))._unsafeUnwrap();
    expect((await small.turn({ budget }))._unsafeUnwrapErr().details).toMatchObject({ limit: "maxToolCalls", value: 3, current: 4 });
    await small.keel.close();
  });

  it("checkpoint writes the handoff and then resets the counter; without a session it writes nothing", async () => {
    const { keel, turn, store } = setup(makeStore, { toolCalls: () => 4 });
    expect((await keel.checkpoint({ missionId: "m1", role: "engineer", handoff }))._unsafeUnwrapErr().code).toBe("no_session");
    expect((await keel.sessions.readHandoff("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
    (await keel.openWorkSession({ missionId: "m1", role: "engineer", model: "opus" }))._unsafeUnwrap();
    (await turn({ budget }))._unsafeUnwrap();
    const bad = (await keel.checkpoint({ missionId: "m1", role: "engineer", handoff: { done: "not a list" } as never }))._unsafeUnwrapErr();
    expect(bad.code).toBe("invalid_input");
    expect((await keel.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap().session!.checkpointCounter).toBe(4);
    const done = (await keel.checkpoint({ missionId: "m1", role: "engineer", handoff }))._unsafeUnwrap();
    expect(done.handoff).toMatchObject({ revision: 1, done: ["parser"] });
    expect(done.status.session).toMatchObject({ checkpointCounter: 0, checkpoints: 1, toolCalls: 4, scope: "role" });
    const stored = (await store.docs.get(["missions", "m1", "handoffs", "engineer"]))._unsafeUnwrap();
    expect(stored?.value).toMatchObject({ done: ["parser"] });
    await keel.close();
  });

  it("resetCheckpointCounter resets the counter the gate's session holds, and writes no handoff; checkpoint does both", async () => {
    const { keel, turn, store, ofType } = setup(makeStore, { toolCalls: () => 3 });
    const scope = { missionId: "m1", role: "engineer" };
    expect((await keel.resetCheckpointCounter(scope))._unsafeUnwrapErr().code).toBe("no_session");
    expect((await store.docs.get(["missions", "m1", "work-sessions"]))._unsafeUnwrap()).toBeUndefined();
    expect((await keel.resetCheckpointCounter({ missionId: "../m", role: "engineer" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await keel.resetCheckpointCounter({ missionId: "m1" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    const opened = (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await turn({ budget }))._unsafeUnwrap();
    (await turn({ budget }))._unsafeUnwrap();
    const reset = (await keel.resetCheckpointCounter(scope))._unsafeUnwrap();
    expect(reset.session).toMatchObject({ checkpointCounter: 0, checkpoints: 0, toolCalls: 6, sessionId: opened.session!.sessionId });
    // Read back from the store, as the capacity gate reads it; no handoff was written.
    expect((await keel.workSession(scope))._unsafeUnwrap().session).toMatchObject({ checkpointCounter: 0, toolCalls: 6 });
    expect((await keel.sessions.readHandoff("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
    expect(ofType("work.session.checkpoint_counter_reset")).toMatchObject([{ missionId: "m1", role: "engineer", sessionId: opened.session!.sessionId, previous: 6 }]);
    expect(ofType("work.session.checkpoint")).toEqual([]);
    // The deprecated hygiene view resets the same counter, in the same document.
    (await turn({ budget }))._unsafeUnwrap();
    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
    expect((await hygiene.resetCheckpointCounter())._unsafeUnwrap()).toMatchObject({ checkpointCounter: 0, toolCalls: 9 });
    expect((await keel.workSession(scope))._unsafeUnwrap().session!.checkpointCounter).toBe(0);
    // checkpoint: the handoff first, then the same reset (and it counts a checkpoint).
    (await turn({ budget }))._unsafeUnwrap();
    const done = (await keel.checkpoint({ ...scope, handoff }))._unsafeUnwrap();
    expect(done.status.session).toMatchObject({ checkpointCounter: 0, checkpoints: 1, toolCalls: 12 });
    expect(done.handoff.revision).toBe(1);
    await keel.close();
  });

  it("pins the model: a turn on another model emits work.session.model_mismatch and the status shows it", async () => {
    const { keel, turn, ofType } = setup(makeStore);
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await turn({ model: "opus" }))._unsafeUnwrap();
    expect(ofType("work.session.model_mismatch")).toHaveLength(0);
    (await turn({ model: "haiku" }))._unsafeUnwrap();
    expect(ofType("work.session.model_mismatch")).toMatchObject([{ missionId: "m1", role: "engineer", expected: "opus", actual: "haiku" }]);
    const status = (await keel.workSession({ missionId: "m1" }))._unsafeUnwrap();
    expect(status.session!.modelMismatch).toEqual({ turns: 1, lastModel: "haiku" });
    // Opening the same scope on another model is refused while one is open.
    expect((await keel.openWorkSession({ missionId: "m1", model: "haiku" }))._unsafeUnwrapErr().code).toBe("conflict");
    await keel.close();
  });

  it("a turn that names no model is model unknown, not a mismatch against the pinned model", async () => {
    const { keel, turn, ofType } = setup(makeStore);
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await turn({ model: null }))._unsafeUnwrap();
    (await turn({ model: undefined }))._unsafeUnwrap();
    expect(ofType("work.session.model_mismatch")).toEqual([]);
    expect(ofType("work.session.turn").map((event) => event.modelPin)).toEqual(["unknown", "unknown"]);
    (await turn({ model: "opus" }))._unsafeUnwrap();
    (await turn({ model: "haiku" }))._unsafeUnwrap();
    expect(ofType("work.session.turn").map((event) => event.modelPin)).toEqual(["unknown", "unknown", "match", "mismatch"]);
    const status = (await keel.workSession({ missionId: "m1" }))._unsafeUnwrap();
    expect(status.session).toMatchObject({ turns: 4, turnsWithoutModel: 2, modelMismatch: { turns: 1, lastModel: "haiku" } });
    const metrics = (await keel.workSessionMetrics({ missionId: "m1", slice: { session: "current" } }))._unsafeUnwrap();
    expect(metrics).toMatchObject({ modelMismatches: 1, turnsWithoutModel: 2 });
    await keel.close();
  });

  it("says an audit is due after 3 closed sessions (configurable) and recordAudit resets it", async () => {
    const { keel, ofType } = setup(makeStore);
    for (let index = 0; index < 3; index++) {
      (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
      const closed = (await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrap();
      expect(closed.status.audit.due).toBe(index === 2);
    }
    expect(ofType("work.session.audit_due")).toMatchObject([{ missionId: "m1", closedSinceAudit: 3, every: 3 }]);
    expect((await keel.workSession({ missionId: "m1" }))._unsafeUnwrap().audit).toMatchObject({ due: true, closedSinceAudit: 3 });
    const audited = (await keel.recordAudit({ missionId: "m1", note: "reviewed" }))._unsafeUnwrap();
    expect(audited.audit).toMatchObject({ due: false, closedSinceAudit: 0 });
    expect(ofType("work.session.audited")).toMatchObject([{ closedSinceAudit: 3, note: "reviewed" }]);
    expect((await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrapErr().code).toBe("no_session");
    await keel.close();

    const often = setup(makeStore, {}, { workSessions: { auditEvery: 1 } });
    (await often.keel.openWorkSession({ missionId: "m2", model: null }))._unsafeUnwrap();
    expect((await often.keel.closeWorkSession({ missionId: "m2" }))._unsafeUnwrap().status.audit.due).toBe(true);
    await often.keel.close();
  });

  it("slices metrics by session: this session over its own window, no_session without one, a window over the last N", async () => {
    const { keel, turn } = setup(makeStore, { toolCalls: () => 1 });
    (await turn())._unsafeUnwrap(); // before any session: in no session's figures
    expect((await keel.workSessionMetrics({ missionId: "m1", slice: { session: "current" } }))._unsafeUnwrapErr().code).toBe("no_session");
    expect((await keel.workSessionMetrics({ missionId: "m1", slice: { lastSessions: 3 } }))._unsafeUnwrapErr().code).toBe("no_session");
    for (const turns of [1, 2, 3]) {
      (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
      for (let index = 0; index < turns; index++) (await turn({ taskId: `task-${turns}` }))._unsafeUnwrap();
      if (turns < 3) (await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrap();
    }
    const current = (await keel.workSessionMetrics({ missionId: "m1", role: "engineer", slice: { session: "current" } }))._unsafeUnwrap();
    expect(current).toMatchObject({ state: "open", turns: 3, tasks: 1, tokens: 330, toolCalls: 3 });
    const window = (await keel.workSessionMetrics({ missionId: "m1", slice: { lastSessions: 2 } }))._unsafeUnwrap();
    expect(window).toMatchObject({ requested: 2, turns: 5, tokens: 550, tasks: 2 });
    expect("sessions" in window && window.sessions.map((session) => session.turns)).toEqual([2, 3]);
    await keel.close();
  });

  it("creates the mission checkpoint placeholder on the first turn, never over a later one: no warnings", async () => {
    const { keel, turn, store } = setup(makeStore);
    const first = (await turn())._unsafeUnwrap();
    expect(first.warnings).toEqual([]);
    expect((await keel.sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()?.checkpoint.placeholder).toBe(true);
    // Another mission whose checkpoint a role already wrote: left as it is.
    const authored = { schemaVersion: 1, missionId: "m2", placeholder: false, roles: { planner: { openItems: ["x"], turn: 1, updatedAt: 1 } }, createdAt: 1, updatedAt: 1 };
    (await store.docs.put(["missions", "m2", "checkpoint"], authored, { create: true }))._unsafeUnwrap();
    const second = (await turn({ missionId: "m2" }))._unsafeUnwrap();
    expect(second.warnings).toEqual([]);
    expect((await keel.sessions.readMissionCheckpoint("m2"))._unsafeUnwrap()?.checkpoint).toEqual(authored);
    await keel.close();
  });

  it("answers bad input with invalid_input", async () => {
    const { keel } = setup(makeStore);
    expect((await keel.openWorkSession({ missionId: "../x", model: "opus" }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await keel.openWorkSession({ missionId: "m1" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await keel.workSession({ missionId: "m1", extra: 1 } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await keel.workSessionMetrics({ missionId: "m1", slice: { lastSessions: 0 } }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await keel.runRoleTurn({ missionId: "m1", role: "r", prompt: "x", budget: { tokens: -1 } }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(() => createKeel({ store: createMemoryStore(), workSessions: { maxToolCalls: 0 } })).toThrowError(expect.objectContaining({ code: "invalid_input" }));
    await keel.close();
  });
});

describe("work sessions: faults", () => {
  it("leaves the counter alone when the handoff cannot be written, and a handoff write failing resets nothing", async () => {
    const faulty = createFaultyStore(createMemoryStore());
    const { keel, turn } = setup(() => faulty, { toolCalls: () => 2 });
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await turn({ budget }))._unsafeUnwrap();
    faulty.faults.add({ operation: "docs.put", keyPrefix: ["missions", "m1", "handoffs"], code: "io_failed", times: 1 });
    expect((await keel.checkpoint({ missionId: "m1", role: "engineer", handoff }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect((await keel.workSession({ missionId: "m1" }))._unsafeUnwrap().session!.checkpointCounter).toBe(2);
    (await keel.checkpoint({ missionId: "m1", role: "engineer", handoff }))._unsafeUnwrap();
    expect((await keel.workSession({ missionId: "m1" }))._unsafeUnwrap().session!.checkpointCounter).toBe(0);
    await keel.close();
  });

  it("a work-session store failure after a turn is a warning, never a changed result", async () => {
    const faulty = createFaultyStore(createMemoryStore());
    const { keel, turn } = setup(() => faulty);
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    faulty.faults.add({ operation: "docs.put", keyPrefix: ["missions", "m1", "work-sessions"], code: "io_failed", times: 1 });
    const result = (await turn())._unsafeUnwrap();
    expect(result.text).toBe("Decision: turn 1");
    expect(result.warnings).toMatchObject([{ target: "work_session", operation: "record", code: "io_failed" }]);
    await keel.close();
  });
});
