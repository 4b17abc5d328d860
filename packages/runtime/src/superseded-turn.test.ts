import { createEventBus, createManualClock, type KeelEvent } from "@keel/core";
import { createKeel, type Keel, type KeelOptions } from "@keel/runtime";
import { createMemoryStore } from "@keel/store";
import { afterEach, describe, expect, it } from "vitest";
import { createPausingBackend } from "../../../test/support/runtime-fake-backend.js";

const open: Keel[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

function keelOf(options: KeelOptions): Keel {
  const keel = createKeel({ policy: "rolling", ...options });
  open.push(keel);
  return keel;
}

const turn = { missionId: "m1", role: "engineer", prompt: "Add the flag.", objective: "Ship --json" };

describe("a superseded turn", () => {
  it("stays Ok but says superseded when another host took the role over while it ran", async () => {
    // Two hosts on one store. Host A stalls inside its turn past the lease's time to live (the
    // store's clock moves on, A's renewal does not run); host B takes the role over and runs a turn.
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const seenA: KeelEvent[] = [];
    const eventsA = createEventBus({ clock });
    eventsA.on("*", (event) => seenA.push(event));
    const hostB = keelOf({ store, clock, backends: [createPausingBackend()], roleLease: { ttlMs: 1_000, waitMs: 0 } });
    let duringA: Awaited<ReturnType<Keel["runRoleTurn"]>> | undefined;
    const hostA = keelOf({
      store,
      clock,
      events: eventsA,
      roleLease: { ttlMs: 1_000 },
      backends: [
        createPausingBackend(async (request) => {
          if (!request.prompt.endsWith("A's work.")) return;
          clock.advance(1_500);
          duringA = await hostB.runRoleTurn({ ...turn, prompt: "B's work." });
        }),
      ],
    });
    const a = (await hostA.runRoleTurn({ ...turn, prompt: "A's work." }))._unsafeUnwrap();
    const b = duringA!._unsafeUnwrap();

    expect(b.superseded).toBe(false);
    expect(b.plan.turn).toBe(1);
    expect(a.superseded).toBe(true);
    expect(a.text).toBe("Decision: A's work.");
    expect(a.plan.turn).toBe(1);
    expect(a.warnings).toContainEqual(expect.objectContaining({ target: "capsule", operation: "write", code: "lease_lost" }));
    expect(a.warnings).toContainEqual(expect.objectContaining({ target: "lease", operation: "lost", code: "lease_lost" }));
    // The role's state is B's: A's decision was not recorded.
    const capsule = (await hostA.sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    expect(capsule?.counters.totalTurns).toBe(1);
    expect(capsule?.decisiveOutput).toBe("B's work.");
    const turnEvents = seenA.filter((event) => event.type === "role.session.turn");
    expect(turnEvents).toEqual([expect.objectContaining({ turn: 1, capsuleWritten: false, superseded: true })]);
    expect(seenA).toContainEqual(expect.objectContaining({ type: "role.session.warning", target: "lease", operation: "lost", code: "lease_lost" }));

    // A's next turn knows B's work only, and is recorded again.
    const next = (await hostA.runRoleTurn({ ...turn, prompt: "A again." }))._unsafeUnwrap();
    expect(next.warnings).toEqual([]);
    expect(next.superseded).toBe(false);
    expect(next.plan.turn).toBe(2);
    expect(seenA.filter((event) => event.type === "role.session.turn").at(-1)).toMatchObject({ turn: 2, capsuleWritten: true, superseded: false });
  });

  it("is never claimed for a fresh-policy turn, which writes no capsule", async () => {
    const seen: KeelEvent[] = [];
    const events = createEventBus();
    events.on("role.session.turn", (event) => seen.push(event));
    const keel = keelOf({ store: createMemoryStore(), events, backends: [createPausingBackend()], policy: "fresh" });
    expect((await keel.runRoleTurn(turn))._unsafeUnwrap().superseded).toBe(false);
    expect(seen).toEqual([expect.objectContaining({ capsuleWritten: false, superseded: false })]);
  });
});
