import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEventBus, createManualClock, type KeelEvent } from "@keel/core";
import { calibrationDrift } from "@keel/budget";
import { createKeel } from "@keel/runtime";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFsStore } from "@keel/store-fs";
import { analyzeWorkSessions } from "@keel/telemetry";
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
      const dir = mkdtempSync(join(tmpdir(), "keel-no-zeros-"));
      made.push(dir);
      return createFsStore({ dir });
    },
  ],
];

/*
 * The seed's five mechanisms that switch off without an open work session — usage telemetry,
 * token metrics, model pinning, the "this session" slice and the audit cadence — must each fail
 * loudly (no_session, or null for unknown), never by writing a zero or passing an all-time
 * figure off as a session's. Each expectation below fails if one of them does.
 */
describe.each(stores)("no silent zeros for a missing work session (%s store)", (_name, makeStore) => {
  it("records every turn, writes nothing for a session that does not exist, and answers no_session for it", async () => {
    const clock = createManualClock();
    const events = createEventBus({ clock });
    const seen: KeelEvent[] = [];
    events.on("*", (event) => seen.push(event));
    const store = makeStore();
    // Turn 1 reports usage and tool calls, turn 2 neither.
    const backend = createToolBackend({
      clock,
      toolCalls: (turn) => (turn === 1 ? 7 : null),
      usage: (turn) => (turn === 1 ? { inputUncached: 900, cacheRead: 0, cacheWrite: 0, output: 100, reasoning: null, costUsd: null } : null),
    });
    const keel = createKeel({ store, backends: [backend], events, clock });
    for (const model of ["opus", "haiku"]) {
      (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Work.", model }))._unsafeUnwrap();
    }

    // 1. Usage telemetry: both turns are recorded, in no session, with their real figures or null.
    const turns = seen.filter((event) => event.type === "work.session.turn");
    expect(turns).toMatchObject([
      { sessionId: null, tokens: 1_000, toolCalls: 7 },
      { sessionId: null, tokens: null, toolCalls: null },
    ]);
    // Nothing was written for a session that does not exist: no counters, no zeros.
    expect((await store.docs.get(["missions", "m1", "work-sessions"]))._unsafeUnwrap()).toBeUndefined();

    // 2. Token metrics and 4. the "this session" slice: no_session, although all-time figures exist.
    for (const slice of [{ session: "current" as const }, { lastSessions: 3 }]) {
      const refused = (await keel.workSessionMetrics({ missionId: "m1", role: "engineer", slice }))._unsafeUnwrapErr();
      expect(refused.code).toBe("no_session");
      expect(refused.message).toContain("openWorkSession");
    }
    const offline = analyzeWorkSessions(seen)._unsafeUnwrap();
    expect(offline.thisSession).toEqual({ state: "no_session" });
    expect(offline.sessions).toEqual([]);
    expect(offline.tokenWindow).toEqual({ requested: 5, sessions: 0, tokens: null });
    expect(offline.outsideSessions).toEqual({ turns: 2, tokens: 1_000, turnsWithoutUsage: 1 });

    // 3. Model pinning: two models, but no session to pin one: no mismatch, and no counters shown.
    expect(seen.filter((event) => event.type === "work.session.model_mismatch")).toEqual([]);
    const status = (await keel.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    expect(status).toMatchObject({ state: "no_session", session: null, exceeded: [] });

    // 5. Audit cadence: turns without sessions are no closed sessions; closing none is refused and counts nothing.
    expect(status.audit).toEqual({ due: false, closedSinceAudit: 0, every: 3, lastAuditAt: null });
    expect((await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrapErr().code).toBe("no_session");
    expect(seen.filter((event) => event.type === "work.session.audit_due" || event.type === "work.session.closed")).toEqual([]);
    expect((await store.docs.get(["missions", "m1", "work-sessions"]))._unsafeUnwrap()).toBeUndefined();

    // A session whose turns reported no usage: its tokens are unknown (null), not 0.
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Again.", model: "opus" }))._unsafeUnwrap();
    const current = (await keel.workSessionMetrics({ missionId: "m1", slice: { session: "current" } }))._unsafeUnwrap();
    expect(current).toMatchObject({ turns: 1, tokens: null, toolCalls: null, turnsWithoutUsage: 1 });
    // ... and the session's window holds only its own turn, not the two before it.
    expect(analyzeWorkSessions(seen)._unsafeUnwrap().thisSession).toMatchObject({ state: "open", session: { turns: 1, tokens: null } });
    await keel.close();
  });

  it("tool calls a backend cannot see are unknown, never 0: in the turn's result, the status, the events and the gate", async () => {
    const clock = createManualClock();
    const events = createEventBus({ clock });
    const seen: KeelEvent[] = [];
    events.on("*", (event) => seen.push(event));
    const backend = createToolBackend({ clock, minutes: 60, toolCalls: () => null });
    const keel = createKeel({ store: makeStore(), backends: [backend], events, clock, workSessions: { maxToolCalls: 1 } });
    const budget = { tokens: 100_000 };
    (await keel.openWorkSession({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    // A limit of 1 tool call: were unknown counted as 0, it would never bind; minutes bind instead.
    for (let turn = 0; turn < 3; turn++) {
      const result = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "Work.", model: "opus", budget }))._unsafeUnwrap();
      expect(result.toolCalls).toBeNull();
    }
    const status = (await keel.workSession({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    expect(status).toMatchObject({ toolCalls: null, turnsWithoutToolCalls: 3, activeMinutes: 180, exceeded: ["maxActiveMinutes"] });
    expect(status.session).toMatchObject({ turns: 3, turnsWithoutToolCalls: 3, checkpointCounter: 0 });
    const refused = (await keel.runRoleTurn({ missionId: "m1", role: "engineer", prompt: "More.", model: "opus", budget }))._unsafeUnwrapErr();
    expect(refused.details).toMatchObject({ limit: "maxActiveMinutes" });
    expect(seen.filter((event) => event.type === "work.session.turn").map((event) => (event as { toolCalls: unknown }).toolCalls)).toEqual([null, null, null]);
    expect((await keel.workSessionMetrics({ missionId: "m1", slice: { session: "current" } }))._unsafeUnwrap()).toMatchObject({ toolCalls: null });
    (await keel.closeWorkSession({ missionId: "m1" }))._unsafeUnwrap();
    expect(seen.find((event) => event.type === "work.session.closed")).toMatchObject({ toolCalls: null, turnsWithoutToolCalls: 3 });
    expect(analyzeWorkSessions(seen)._unsafeUnwrap().sessions[0]).toMatchObject({ toolCalls: null, turnsWithoutToolCalls: 3 });
    await keel.close();
  });

  it("calibration drift keeps reading task records only: the same records give the same drift with or without a session", async () => {
    const records = [
      { tier: "small", estimated: { calls: 2, tokens: 100 }, actual: { calls: 3, tokens: 150 } },
      { tier: "small", estimated: { calls: 2, tokens: 100 }, actual: { calls: 2, tokens: null } },
    ];
    const before = calibrationDrift(records)._unsafeUnwrap();
    const keel = createKeel({ store: makeStore(), backends: [createToolBackend({ clock: createManualClock() })] });
    (await keel.openWorkSession({ missionId: "m1", model: null }))._unsafeUnwrap();
    expect(calibrationDrift(records)._unsafeUnwrap()).toEqual(before);
    expect(before).toMatchObject([{ tier: "small", tasks: 2, calls: { samples: 2 }, tokens: { samples: 1, medianRatio: 1.5 }, skipped: { tokens: 1 } }]);
    await keel.close();
  });
});
