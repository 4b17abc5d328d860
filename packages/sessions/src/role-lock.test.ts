import { createEventBus, createManualClock } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { okAsync, ResultAsync } from "neverthrow";
import { describe, expect, it } from "vitest";
import { createRoleSessions } from "./role-sessions.js";
import { roleLeaseName } from "./session-keys.js";
import type { Execute, RoleSessionTurnRequest } from "./turn-types.js";

const request: RoleSessionTurnRequest = { missionId: "m1", role: "engineer", backend: { id: "codex", resumable: true }, model: null, branch: "main", objectiveRevision: 1 };

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("per mission-and-role lease", () => {
  it("serializes two turns of the same role: the second plans only after the first saved", async () => {
    const sessions = createRoleSessions({ store: createMemoryStore(), policy: "rolling" });
    const log: string[] = [];
    const firstMayEnd = gate();
    const first: Execute = (plan) => {
      log.push(`first starts ${plan.action}`);
      return ResultAsync.fromSafePromise(firstMayEnd.opened).andThen(() => {
        log.push("first ends");
        return okAsync({ text: "1", threadId: "t-1", usage: null, promptBytes: 1 });
      });
    };
    const second: Execute = (plan) => {
      log.push(`second starts ${plan.action} ${plan.threadId}`);
      return okAsync({ text: "2", threadId: plan.threadId ?? "t-2", usage: null, promptBytes: 1 });
    };
    const running = [sessions.runTurn(request, first), sessions.runTurn(request, second)];
    await wait(50);
    expect(log).toEqual(["first starts fresh"]);
    firstMayEnd.open();
    const [a, b] = await Promise.all(running);
    expect(a!.isOk() && b!.isOk()).toBe(true);
    // The second turn saw the first one's thread: no interleaved read-modify-write.
    expect(log).toEqual(["first starts fresh", "first ends", "second starts resumed t-1"]);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()?.counters.totalTurns).toBe(2);
  });

  it("lets different roles run at the same time", async () => {
    const sessions = createRoleSessions({ store: createMemoryStore(), policy: "rolling" });
    const bothStarted = { engineer: gate(), reviewer: gate() };
    const execute =
      (role: "engineer" | "reviewer", other: "engineer" | "reviewer"): Execute =>
      () => {
        bothStarted[role].open();
        // Ends only once the other role's turn has started too.
        return ResultAsync.fromSafePromise(bothStarted[other].opened).map(() => ({ text: role, threadId: `${role}-t`, usage: null, promptBytes: 1 }));
      };
    const results = await Promise.all([
      sessions.runTurn(request, execute("engineer", "reviewer")),
      sessions.runTurn({ ...request, role: "reviewer" }, execute("reviewer", "engineer")),
    ]);
    expect(results.every((result) => result.isOk())).toBe(true);
  });

  it("fences the capsule write: a turn whose lease was taken over saves nothing and warns, keeping its outcome as superseded", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const events = createEventBus({ clock });
    const turnEvents: unknown[] = [];
    events.on("role.session.turn", (event) => turnEvents.push(event));
    const sessions = createRoleSessions({ store, clock, events, policy: "rolling", lease: { ttlMs: 1_000 } });
    const outcome = { text: "late", threadId: "t-1", usage: null, promptBytes: 1, openCheckpointItems: ["x"] };
    await sessions.initMissionCheckpoint("m1");
    const result = await sessions.runTurn(request, () => {
      // The turn outlives its lease (a stuck host), and another process takes the lease over.
      clock.advance(5_000);
      return store.leases.acquire(roleLeaseName("m1", "engineer"), "other-process", { ttlMs: 60_000 }).map(() => outcome);
    });
    const value = result._unsafeUnwrap();
    expect(value.outcome).toBe(outcome);
    expect(value.warnings).toEqual([
      expect.objectContaining({ target: "checkpoint", operation: "write", code: "lease_lost" }),
      expect.objectContaining({ target: "capsule", operation: "write", code: "lease_lost" }),
      // The distinct warning of a superseded turn.
      expect.objectContaining({ target: "lease", operation: "lost", code: "lease_lost" }),
    ]);
    expect(value.superseded).toBe(true);
    expect(value.plan.turn).toBe(1);
    expect(turnEvents).toEqual([expect.objectContaining({ turn: 1, capsuleWritten: false, superseded: true })]);
    expect((await sessions.readCapsule("m1", "engineer"))._unsafeUnwrap()).toBeUndefined();
    expect((await sessions.readMissionCheckpoint("m1"))._unsafeUnwrap()?.checkpoint.roles).toEqual({});
  });

  it("does not call a turn whose lease held superseded: its event says capsuleWritten", async () => {
    const events = createEventBus();
    const turnEvents: unknown[] = [];
    events.on("role.session.turn", (event) => turnEvents.push(event));
    const sessions = createRoleSessions({ store: createMemoryStore(), events, policy: "rolling" });
    const value = (await sessions.runTurn(request, () => okAsync({ text: "ok", threadId: "t-1", usage: null, promptBytes: 1 })))._unsafeUnwrap();
    expect(value.superseded).toBe(false);
    expect(turnEvents).toEqual([expect.objectContaining({ capsuleWritten: true, superseded: false })]);
    await sessions.close();
  });

  it("names leases readably, and by digest when a name would be ambiguous or too long", () => {
    expect(roleLeaseName("m1", "engineer")).toBe("role-session.m1.engineer");
    expect(roleLeaseName("a.b", "c")).not.toBe(roleLeaseName("a", "b.c"));
    expect(roleLeaseName("m".repeat(128), "r")).toMatch(/^role-session\.[0-9a-f]{40}$/);
  });
});

describe("a lease kept between turns (lingerMs)", () => {
  function countingLeases(store: ReturnType<typeof createMemoryStore>) {
    const calls: string[] = [];
    const leases = {
      acquire: (...args: Parameters<typeof store.leases.acquire>) => (calls.push("acquire"), store.leases.acquire(...args)),
      renew: (...args: Parameters<typeof store.leases.renew>) => (calls.push("renew"), store.leases.renew(...args)),
      release: (...args: Parameters<typeof store.leases.release>) => (calls.push("release"), store.leases.release(...args)),
      current: (...args: Parameters<typeof store.leases.current>) => (calls.push("current"), store.leases.current(...args)),
    };
    return { store: { ...store, leases }, calls };
  }
  const execute: Execute = (plan) => okAsync({ text: "ok", threadId: plan.threadId ?? "t-1", usage: null, promptBytes: 1 });

  it("takes the lease once for a burst of turns and releases it on close", async () => {
    const { store, calls } = countingLeases(createMemoryStore());
    const sessions = createRoleSessions({ store, policy: "rolling", lease: { lingerMs: 60_000 } });
    for (let index = 0; index < 3; index++) (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(calls).toEqual(["acquire", "current", "current"]);
    // Still held: another holder cannot take it.
    expect((await store.leases.acquire(roleLeaseName("m1", "engineer"), "other", { ttlMs: 1_000 }))._unsafeUnwrapErr().code).toBe("lease_held");
    await sessions.close();
    expect(calls.at(-1)).toBe("release");
    expect((await store.leases.acquire(roleLeaseName("m1", "engineer"), "other", { ttlMs: 1_000 })).isOk()).toBe(true);
  });

  it("does not trust a kept lease that was taken over: the next turn must acquire it again", async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ clock });
    const sessions = createRoleSessions({ store, clock, policy: "rolling", lease: { ttlMs: 1_000, waitMs: 0, lingerMs: 60_000 } });
    (await sessions.runTurn(request, execute))._unsafeUnwrap();
    clock.advance(5_000);
    (await store.leases.acquire(roleLeaseName("m1", "engineer"), "other-process", { ttlMs: 60_000 }))._unsafeUnwrap();
    let ran = false;
    const result = await sessions.runTurn(request, (plan) => {
      ran = true;
      return execute(plan);
    });
    expect(result._unsafeUnwrapErr().code).toBe("lease_held");
    expect(ran).toBe(false);
    await sessions.close();
  });

  it("releases at once after each turn by default", async () => {
    const { store, calls } = countingLeases(createMemoryStore());
    const sessions = createRoleSessions({ store, policy: "rolling" });
    for (let index = 0; index < 2; index++) (await sessions.runTurn(request, execute))._unsafeUnwrap();
    expect(calls).toEqual(["acquire", "release", "acquire", "release"]);
  });
});
