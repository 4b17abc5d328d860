import { createManualClock } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { describe, expect, it } from "vitest";
import { createHygiene } from "./hygiene.js";
import { createRoleSessions } from "./role-sessions.js";
import { createWorkSessions } from "./work-session.js";

const handoff = { done: ["parser"], inFlight: [{ task: "lexer", state: "half the tokens" }], nextSteps: ["tests"], warnings: ["flaky CI"] };
const minute = 60_000;

describe("work-session hygiene (createHygiene, deprecated)", () => {
  it("is a view of createWorkSessions: the same session, in the work-sessions document", async () => {
    const store = createMemoryStore();
    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
    (await hygiene.open())._unsafeUnwrap();
    (await hygiene.recordToolCalls(2))._unsafeUnwrap();
    const work = createWorkSessions({ store });
    const status = (await work.status({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    expect(status).toMatchObject({ state: "open", toolCalls: 2, session: { sessionId: hygiene.status().sessionId, role: "engineer", checkpointCounter: 2, turns: 0 } });
    expect((await store.docs.get(["missions", "m1", "hygiene", "engineer"]))._unsafeUnwrap()).toBeUndefined();
    // A session opened through createWorkSessions is the one the role's hygiene counts in.
    (await work.close({ missionId: "m1", role: "engineer" }))._unsafeUnwrap();
    (await work.open({ missionId: "m1", model: "opus" }))._unsafeUnwrap();
    expect((await hygiene.recordToolCalls(1))._unsafeUnwrap()).toMatchObject({ state: "open", toolCalls: 1 });
  });


  it("says no_session with no open session, and refuses to count", async () => {
    const hygiene = createHygiene({ store: createMemoryStore(), missionId: "m1", role: "engineer" });
    expect(hygiene.status()).toMatchObject({ state: "no_session", toolCalls: 0, activeMinutes: 0, checkpointCounter: 0, sessionId: null });
    expect((await hygiene.recordToolCalls(1))._unsafeUnwrapErr().code).toBe("no_session");
    expect((await hygiene.resetCheckpointCounter())._unsafeUnwrapErr().code).toBe("no_session");
    expect((await hygiene.close())._unsafeUnwrapErr().code).toBe("no_session");
    expect((await hygiene.checkpoint(handoff))._unsafeUnwrapErr().code).toBe("no_session");
  });

  it("counts tool calls and active minutes, leaving idle gaps out", async () => {
    const clock = createManualClock();
    const hygiene = createHygiene({ store: createMemoryStore(), missionId: "m1", role: "engineer", clock, limits: { idleMinutes: 10 } });
    (await hygiene.open())._unsafeUnwrap();
    clock.advance(5 * minute);
    (await hygiene.recordToolCalls(2))._unsafeUnwrap();
    clock.advance(60 * minute); // idle: does not count
    (await hygiene.recordActivity())._unsafeUnwrap();
    clock.advance(10 * minute); // at the threshold: counts
    const status = (await hygiene.recordToolCalls())._unsafeUnwrap();
    expect(status).toMatchObject({ state: "open", toolCalls: 3, activeMinutes: 15, checkpointCounter: 3, exceeded: [] });
    expect(hygiene.status()).toEqual(status);
  });

  it("reports the default limits of 200 tool calls and 180 active minutes as exceeded, and keeps counting", async () => {
    const clock = createManualClock();
    const hygiene = createHygiene({ store: createMemoryStore(), missionId: "m1", role: "engineer", clock });
    (await hygiene.open())._unsafeUnwrap();
    expect(hygiene.status().limits).toEqual({ activeMinutes: 180, toolCalls: 200, idleMinutes: 15 });
    for (let step = 0; step < 18; step++) {
      clock.advance(10 * minute);
      (await hygiene.recordToolCalls(12))._unsafeUnwrap();
    }
    expect(hygiene.status()).toMatchObject({ toolCalls: 216, activeMinutes: 180, exceeded: ["toolCalls", "activeMinutes"] });
  });

  it("writes a handoff whatever the limits, resetting no counter", async () => {
    const store = createMemoryStore();
    const sessions = createRoleSessions({ store });
    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer", limits: { toolCalls: 5 } });
    (await hygiene.open())._unsafeUnwrap();
    (await hygiene.recordToolCalls(9))._unsafeUnwrap();
    expect(hygiene.status().exceeded).toEqual(["toolCalls"]);
    const written = (await sessions.writeHandoff("m1", "engineer", handoff))._unsafeUnwrap();
    expect(written).toMatchObject({ ...handoff, revision: 1, role: "engineer" });
    expect((await hygiene.refresh())._unsafeUnwrap()).toMatchObject({ toolCalls: 9, checkpointCounter: 9 });
    expect((await sessions.readHandoff("m1", "engineer"))._unsafeUnwrap()).toEqual(written);
  });

  it("checkpoint writes the handoff, then resets only the checkpoint counter", async () => {
    const hygiene = createHygiene({ store: createMemoryStore(), missionId: "m1", role: "engineer" });
    (await hygiene.open())._unsafeUnwrap();
    (await hygiene.recordToolCalls(4))._unsafeUnwrap();
    const { handoff: record, status } = (await hygiene.checkpoint(handoff))._unsafeUnwrap();
    expect(record.done).toEqual(["parser"]);
    expect(status).toMatchObject({ toolCalls: 4, checkpointCounter: 0 });
    (await hygiene.recordToolCalls(2))._unsafeUnwrap();
    expect((await hygiene.resetCheckpointCounter())._unsafeUnwrap()).toMatchObject({ toolCalls: 6, checkpointCounter: 0 });
  });

  it("checkpoint runs in order: a failed handoff write leaves the counter alone", async () => {
    const store = createFaultyStore(createMemoryStore());
    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
    (await hygiene.open())._unsafeUnwrap();
    (await hygiene.recordToolCalls(4))._unsafeUnwrap();
    store.faults.add({ operation: "docs.put", keyPrefix: ["missions", "m1", "handoffs"], code: "io_failed" });
    expect((await hygiene.checkpoint(handoff))._unsafeUnwrapErr().code).toBe("io_failed");
    expect(hygiene.status().checkpointCounter).toBe(4);
    expect((await hygiene.refresh())._unsafeUnwrap().checkpointCounter).toBe(4);
    // The order: the handoff write was tried before any counter write.
    const operations = store.faults.hits().map((hit) => `${hit.operation} ${hit.key.join("/")}`);
    expect(operations).toEqual(["docs.put missions/m1/handoffs/engineer"]);
  });

  it("open and close are explicit, and a new instance continues an open session", async () => {
    const store = createMemoryStore();
    const clock = createManualClock();
    const first = createHygiene({ store, missionId: "m1", role: "engineer", clock });
    const opened = (await first.open())._unsafeUnwrap();
    clock.advance(minute);
    (await first.recordToolCalls(3))._unsafeUnwrap();
    const restarted = createHygiene({ store, missionId: "m1", role: "engineer", clock });
    expect(restarted.status().state).toBe("no_session");
    const continued = (await restarted.open())._unsafeUnwrap();
    expect(continued).toMatchObject({ state: "open", sessionId: opened.sessionId, toolCalls: 3, checkpointCounter: 3, activeMinutes: 1 });
    const closed = (await restarted.close())._unsafeUnwrap();
    expect(closed).toMatchObject({ sessionId: opened.sessionId, toolCalls: 3 });
    expect(restarted.status().state).toBe("no_session");
    const next = (await restarted.open())._unsafeUnwrap();
    expect(next.sessionId).not.toBe(opened.sessionId);
    expect(next).toMatchObject({ toolCalls: 0, checkpointCounter: 0 });
  });

  it("rejects bad options and bad input", async () => {
    const store = createMemoryStore();
    expect(() => createHygiene({ store, missionId: "m/1", role: "engineer" })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createHygiene({ store, missionId: "m1", role: "engineer", limits: { toolCalls: -1 } })).toThrow(expect.objectContaining({ code: "invalid_input" }));
    const hygiene = createHygiene({ store, missionId: "m1", role: "engineer" });
    (await hygiene.open())._unsafeUnwrap();
    expect((await hygiene.recordToolCalls(-2))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await hygiene.checkpoint({ done: "all" } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(hygiene.status().checkpointCounter).toBe(0);
  });
});

describe("handoffs", () => {
  it("validates, bounds and versions handoffs per role", async () => {
    const sessions = createRoleSessions({ store: createMemoryStore() });
    expect((await sessions.readHandoff("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
    (await sessions.writeHandoff("m1", "engineer", handoff))._unsafeUnwrap();
    const second = (await sessions.writeHandoff("m1", "engineer", { ...handoff, done: ["parser", "lexer"] }))._unsafeUnwrap();
    expect(second.revision).toBe(2);
    expect((await sessions.readHandoff("m1", "planner"))._unsafeUnwrap()).toBeUndefined();
    expect((await sessions.writeHandoff("m1", "engineer", { ...handoff, transcript: [] } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await sessions.writeHandoff("m1", "engineer", { ...handoff, inFlight: [{ task: "x" }] } as never))._unsafeUnwrapErr().code).toBe("invalid_input");
    const many = Array.from({ length: 100 }, () => "y".repeat(4_000));
    expect((await sessions.writeHandoff("m1", "engineer", { ...handoff, done: many }))._unsafeUnwrapErr().code).toBe("too_large");
    expect((await sessions.writeHandoff("m1", "../x", handoff))._unsafeUnwrapErr().code).toBe("invalid_input");
    const handle = sessions.forRole("m1", "engineer")._unsafeUnwrap();
    expect((await handle.readHandoff())._unsafeUnwrap()?.done).toEqual(["parser", "lexer"]);
  });
});
