import { KeelError, createEventBus, estimateTokens, type KeelEvent } from "@keel/core";
import { createKeel, type Keel, type KeelOptions } from "@keel/runtime";
import { createMemoryStore, type KeelStore, type LeaseStore } from "@keel/store";
import { errAsync } from "neverthrow";
import { afterEach, describe, expect, it } from "vitest";
import { createPausingBackend } from "../../../test/support/runtime-fake-backend.js";

const open: Keel[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

const LIMITS = { mission: { tokens: 100_000, calls: 10, timeMs: 10_000_000 } };
const TIMEOUT_MS = 600_000;

/** A runtime under the `rolling` policy with mission limits, its events kept. */
function hostOf(options: KeelOptions): { keel: Keel; seen: KeelEvent[] } {
  const seen: KeelEvent[] = [];
  const events = createEventBus();
  events.on("*", (event) => seen.push(event));
  const keel = createKeel({ policy: "rolling", budget: LIMITS, turnTimeoutMs: TIMEOUT_MS, events, ...options });
  open.push(keel);
  return { keel, seen };
}

const turn = { missionId: "m1", role: "engineer", objective: "Ship --json" };
/** What the runtime reserves for a turn: the prompt's estimate plus the default output reserve. */
const reservedTokens = (prompt: string) => estimateTokens(`${turn.objective}\n${prompt}`) + 4096;

const budgetEvents = (seen: KeelEvent[]) => seen.filter((event) => event.type.startsWith("budget."));

async function missionLedger(keel: Keel) {
  const scope = keel.budget.scope("mission.m1", { limits: LIMITS.mission });
  const snapshot = (await scope.snapshot())._unsafeUnwrap();
  const openReservations = (await scope.openReservations())._unsafeUnwrap();
  return { snapshot, openReservations };
}

describe("a turn that never reaches its backend", () => {
  it("answers lease_held with nothing reserved while another host's turn of the role holds the lease", async () => {
    // Two hosts on one store: B's turn waits 50 ms for the lease A's turn holds, then gives up.
    const store = createMemoryStore();
    const b = hostOf({ store, backends: [createPausingBackend()], roleLease: { waitMs: 50 } });
    let duringA: Awaited<ReturnType<Keel["runRoleTurn"]>> | undefined;
    let ledgerDuringA: Awaited<ReturnType<typeof missionLedger>> | undefined;
    const a = hostOf({
      store,
      backends: [
        createPausingBackend(async () => {
          duringA = await b.keel.runRoleTurn({ ...turn, prompt: "B's work." });
          ledgerDuringA = await missionLedger(a.keel);
        }),
      ],
    });

    expect((await a.keel.runRoleTurn({ ...turn, prompt: "A's work." })).isOk()).toBe(true);
    expect(duringA!._unsafeUnwrapErr().code).toBe("lease_held");

    // While A ran, only A's reservation was open.
    expect(ledgerDuringA!.openReservations).toHaveLength(1);
    expect(ledgerDuringA!.snapshot.reserved).toEqual({ tokens: reservedTokens("A's work."), calls: 1, timeMs: TIMEOUT_MS, costMicroUsd: 0 });
    // After it, only A's settled turn is charged: tokens and the call as reserved, its time as used (1 ms).
    const after = await missionLedger(a.keel);
    expect(after.openReservations).toEqual([]);
    expect(after.snapshot.reserved).toEqual({ tokens: 0, calls: 0, timeMs: 0, costMicroUsd: 0 });
    expect(after.snapshot.settled).toEqual({ tokens: reservedTokens("A's work."), calls: 1, timeMs: 1, costMicroUsd: 0 });
    expect(after.snapshot.remaining).toEqual({ tokens: 100_000 - reservedTokens("A's work."), calls: 9, timeMs: 10_000_000 - 1, costMicroUsd: null });
    // B reserved nothing, so it has no reservation to settle either.
    expect(budgetEvents(b.seen)).toEqual([]);
    expect(budgetEvents(a.seen).map((event) => event.type)).toEqual(["budget.reserved", "budget.settled"]);
  });

  it("reserves nothing when taking the lease fails for another reason (unavailable)", async () => {
    const store = createMemoryStore();
    const leases: LeaseStore = { ...store.leases, acquire: () => errAsync(new KeelError("unavailable", "the lease table is unreachable", { retryable: true })) };
    const backend = createPausingBackend();
    const { keel, seen } = hostOf({ store: { ...store, leases } as KeelStore, backends: [backend] });

    expect((await keel.runRoleTurn({ ...turn, prompt: "Work." }))._unsafeUnwrapErr().code).toBe("unavailable");
    expect(backend.requests).toHaveLength(0);
    const ledger = await missionLedger(keel);
    expect(ledger.openReservations).toEqual([]);
    expect(ledger.snapshot.reserved).toEqual({ tokens: 0, calls: 0, timeMs: 0, costMicroUsd: 0 });
    expect(ledger.snapshot.settled).toEqual({ tokens: 0, calls: 0, timeMs: 0, costMicroUsd: 0 });
    expect(ledger.snapshot.remaining).toEqual({ tokens: 100_000, calls: 10, timeMs: 10_000_000, costMicroUsd: null });
    expect(budgetEvents(seen)).toEqual([]);
  });

  it("reserves nothing when the signal fires while the turn waits for the lease", async () => {
    const store = createMemoryStore();
    const bBackend = createPausingBackend();
    const b = hostOf({ store, backends: [bBackend] });
    const controller = new AbortController();
    let waitingB: ReturnType<Keel["runRoleTurn"]> | undefined;
    const a = hostOf({
      store,
      backends: [
        createPausingBackend(async () => {
          // B's turn starts and waits for the lease A holds; its caller gives up before A is done.
          waitingB = b.keel.runRoleTurn({ ...turn, prompt: "B's work." }, { signal: controller.signal });
          await new Promise((resolve) => setTimeout(resolve, 50));
          controller.abort();
        }),
      ],
    });

    expect((await a.keel.runRoleTurn({ ...turn, prompt: "A's work." })).isOk()).toBe(true);
    expect((await waitingB!)._unsafeUnwrapErr().code).toBe("aborted");
    expect(bBackend.requests).toHaveLength(0);
    expect(budgetEvents(b.seen)).toEqual([]);
    const after = await missionLedger(a.keel);
    expect(after.openReservations).toEqual([]);
    expect(after.snapshot.settled).toEqual({ tokens: reservedTokens("A's work."), calls: 1, timeMs: 1, costMicroUsd: 0 });
    expect(after.snapshot.remaining.calls).toBe(9);
  });
});

describe("a turn aborted while it waits for the role's lease", () => {
  it("answers aborted at once, while the other host's turn still holds the lease", async () => {
    const store = createMemoryStore();
    const bBackend = createPausingBackend();
    // B would wait the default 10 minutes for the lease; its caller aborts after 50 ms.
    const b = hostOf({ store, backends: [bBackend] });
    const controller = new AbortController();
    let answeredWhileAHeld: Awaited<ReturnType<Keel["runRoleTurn"]>> | undefined;
    let waitedMs = 0;
    const a = hostOf({
      store,
      backends: [
        createPausingBackend(async () => {
          const started = Date.now();
          const waiting = b.keel.runRoleTurn({ ...turn, prompt: "B's work." }, { signal: controller.signal });
          setTimeout(() => controller.abort(), 50);
          answeredWhileAHeld = await waiting;
          waitedMs = Date.now() - started;
        }),
      ],
    });

    expect((await a.keel.runRoleTurn({ ...turn, prompt: "A's work." })).isOk()).toBe(true);
    const error = answeredWhileAHeld!._unsafeUnwrapErr();
    expect(error).toBeInstanceOf(KeelError);
    expect(error.code).toBe("aborted");
    expect(error.message).toBe(`the engineer turn of mission "m1" was aborted before it held the role's lease: nothing ran`);
    expect(waitedMs).toBeLessThan(5_000);
    expect(bBackend.requests).toHaveLength(0);
    expect(budgetEvents(b.seen)).toEqual([]);
    expect((await missionLedger(a.keel)).openReservations).toEqual([]);
  });
});

describe("a turn the budget refuses", () => {
  it("is refused under the role's lease, holds nothing, and is the capsule's last failure", async () => {
    const backend = createPausingBackend();
    const { keel, seen } = hostOf({ store: createMemoryStore(), backends: [backend], budget: { mission: { calls: 1 } } });
    expect((await keel.runRoleTurn({ ...turn, prompt: "One." })).isOk()).toBe(true);
    expect((await keel.runRoleTurn({ ...turn, prompt: "Two." }))._unsafeUnwrapErr().code).toBe("budget_exceeded");

    expect(backend.requests).toHaveLength(1);
    const scope = keel.budget.scope("mission.m1", { limits: { calls: 1 } });
    expect((await scope.openReservations())._unsafeUnwrap()).toEqual([]);
    expect((await scope.snapshot())._unsafeUnwrap().settled.calls).toBe(1);
    expect(budgetEvents(seen).map((event) => event.type)).toEqual(["budget.reserved", "budget.threshold", "budget.settled", "budget.refused"]);
    const capsule = (await keel.sessions.readCapsule("m1", "engineer"))._unsafeUnwrap();
    expect(capsule?.counters.totalTurns).toBe(1);
    expect(capsule?.lastFailure?.code).toBe("budget_exceeded");
  });
});
