import { createBudget } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { describe, expect, it } from "vitest";

const LIMITS = { tokens: 1_000, calls: 100 };

/** Two budgets over one store: two processes sharing a ledger, each remembering what it wrote. */
function twoProcesses(store: KeelStore) {
  const first = createBudget({ store }).scope("global", { limits: LIMITS });
  const second = createBudget({ store }).scope("global", { limits: LIMITS });
  return { first, second };
}

/** Counts the reads a budget makes through `inner`. */
function countingReads(inner: KeelStore) {
  const reads = { "docs.get": 0, "logs.read": 0 };
  const store: KeelStore = {
    ...inner,
    docs: { ...inner.docs, get: (...args) => ((reads["docs.get"] += 1), inner.docs.get(...args)) },
    logs: { ...inner.logs, read: (...args) => ((reads["logs.read"] += 1), inner.logs.read(...args)) },
  };
  return { store, reads };
}

describe("a budget reuses the ledger it wrote, only under the store's conditions", () => {
  it("a reserve + settle alone on its ledger reads the document once and the close log not at all", async () => {
    const { store, reads } = countingReads(createMemoryStore());
    const scope = createBudget({ store }).scope("global", { limits: LIMITS });
    (await (await scope.reserve({ tokens: 10 }))._unsafeUnwrap().settle({ tokens: 5 }))._unsafeUnwrap();
    reads["docs.get"] = 0;
    reads["logs.read"] = 0;
    const settled = (await (await scope.reserve({ tokens: 10 }))._unsafeUnwrap().settle({ tokens: 5 }))._unsafeUnwrap();
    expect(reads).toEqual({ "docs.get": 1, "logs.read": 0 });
    expect(settled).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 20 }, openReservations: 0 });
  });

  it("a reserve after another process wrote the ledger decides on the fresh ledger (the stale write is a conflict)", async () => {
    const { first, second } = twoProcesses(createMemoryStore());
    (await (await first.reserve({ tokens: 400 }))._unsafeUnwrap().settle({ tokens: 400 }))._unsafeUnwrap();
    (await second.reserve({ tokens: 500 }))._unsafeUnwrap();
    // 400 settled + 500 reserved: 100 left, which the first budget's remembered ledger does not know.
    expect((await first.reserve({ tokens: 200 }))._unsafeUnwrapErr().code).toBe("budget_exceeded");
    expect((await first.reserve({ tokens: 100 }))._unsafeUnwrap().amounts.tokens).toBe(100);
    expect((await first.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 600 }, settled: { tokens: 400 }, openReservations: 2 });
  });

  it("a settle after another process wrote the ledger returns a snapshot with that write in it", async () => {
    const { first, second } = twoProcesses(createMemoryStore());
    const mine = (await first.reserve({ tokens: 100 }))._unsafeUnwrap();
    (await second.reserve({ tokens: 300 }))._unsafeUnwrap();
    const settled = (await mine.settle({ tokens: 100 }))._unsafeUnwrap();
    expect(settled).toMatchObject({ reserved: { tokens: 300 }, settled: { tokens: 100 }, openReservations: 1 });
  });

  it("a settle after another process's close returns a snapshot with that close in it", async () => {
    const { first, second } = twoProcesses(createMemoryStore());
    const mine = (await first.reserve({ tokens: 100 }))._unsafeUnwrap();
    const theirs = (await second.reserve({ tokens: 300 }))._unsafeUnwrap();
    const again = (await first.reserve({ tokens: 50 }))._unsafeUnwrap();
    // The second process closes its reservation by a log append: the ledger document is unchanged.
    (await theirs.settle({ tokens: 300 }))._unsafeUnwrap();
    const settled = (await mine.settle({ tokens: 100 }))._unsafeUnwrap();
    expect(settled).toMatchObject({ reserved: { tokens: 50 }, settled: { tokens: 400 }, openReservations: 1 });
    (await again.settle({ tokens: 50 }))._unsafeUnwrap();
    expect((await first.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 450 }, openReservations: 0 });
  });

  it("a reservation another process closed is not closed again from the remembered ledger", async () => {
    const { first, second } = twoProcesses(createMemoryStore());
    const mine = (await first.reserve({ tokens: 100 }))._unsafeUnwrap();
    (await (await second.reservation(mine.id))._unsafeUnwrap().abandon())._unsafeUnwrap();
    expect((await mine.settle({ tokens: 10 }))._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { outcome: "abandoned" } });
    expect((await first.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 100 }, openReservations: 0 });
  });

  it("without a close log, a settle after another process's write still lands once, on the fresh ledger", async () => {
    const store = createMemoryStore();
    const first = createBudget({ store: { docs: store.docs } }).scope("global", { limits: LIMITS });
    const second = createBudget({ store: { docs: store.docs } }).scope("global", { limits: LIMITS });
    const mine = (await first.reserve({ tokens: 100 }))._unsafeUnwrap();
    (await second.reserve({ tokens: 300 }))._unsafeUnwrap();
    const settled = (await mine.settle({ tokens: 80 }))._unsafeUnwrap();
    expect(settled).toMatchObject({ reserved: { tokens: 300 }, settled: { tokens: 100 }, openReservations: 1 });
  });
});
