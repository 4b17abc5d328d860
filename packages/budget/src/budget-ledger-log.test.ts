import { createBudget } from "@keel/budget";
import { createMemoryStore, type KeelStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { describe, expect, it } from "vitest";

/** Counts the durable writes made through `inner` (a transparent wrapper, like `createFaultyStore`). */
function createCountingStore(inner: KeelStore) {
  const writes = { "docs.put": 0, "docs.delete": 0, "logs.append": 0, "logs.delete": 0 };
  const store: KeelStore = {
    ...inner,
    docs: {
      ...inner.docs,
      get: (...args) => inner.docs.get(...args),
      list: (...args) => inner.docs.list(...args),
      put: (...args) => ((writes["docs.put"] += 1), inner.docs.put(...args)),
      delete: (...args) => ((writes["docs.delete"] += 1), inner.docs.delete(...args)),
    },
    logs: {
      read: (...args) => inner.logs.read(...args),
      head: (...args) => inner.logs.head(...args),
      list: (...args) => inner.logs.list(...args),
      append: (...args) => ((writes["logs.append"] += 1), inner.logs.append(...args)),
      delete: (...args) => ((writes["logs.delete"] += 1), inner.logs.delete(...args)),
    },
  };
  const total = () => Object.values(writes).reduce((sum, count) => sum + count, 0);
  return { store, writes, total };
}

/** The stored ledger document's JSON. */
async function ledgerJson(store: KeelStore, root: string): Promise<string> {
  const doc = (await store.docs.get(["budget", root]))._unsafeUnwrap();
  return JSON.stringify(doc?.value);
}

async function pairs(scope: ReturnType<ReturnType<typeof createBudget>["scope"]>, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const reservation = (await scope.reserve({ tokens: 10, calls: 1, timeMs: 100 }))._unsafeUnwrap();
    (await reservation.settle({ tokens: 7, timeMs: 60 }))._unsafeUnwrap();
  }
}

describe("budget close log (one document write per reserve + settle, a ledger of constant size)", () => {
  it("a reserve + settle costs one ledger write and one close-log append; without a log, two ledger writes", async () => {
    const counting = createCountingStore(createMemoryStore());
    const scope = createBudget({ store: counting.store }).scope("global", { limits: { tokens: 1_000_000 } });
    await pairs(scope, 3);
    const before = { ...counting.writes };
    await pairs(scope, 10);
    expect(counting.writes["docs.put"] - before["docs.put"]).toBe(10);
    expect(counting.writes["logs.append"] - before["logs.append"]).toBe(10);
    expect(counting.writes["docs.delete"] + counting.writes["logs.delete"]).toBe(0);
    // The settle alone is exactly one durable write.
    const reservation = (await scope.reserve({ tokens: 10 }))._unsafeUnwrap();
    const beforeSettle = counting.total();
    (await reservation.settle({ tokens: 10 }))._unsafeUnwrap();
    expect(counting.total() - beforeSettle).toBe(1);

    const docsOnly = createCountingStore(createMemoryStore());
    const legacy = createBudget({ store: { docs: docsOnly.store.docs } }).scope("global", { limits: { tokens: 1_000_000 } });
    await pairs(legacy, 10);
    expect(docsOnly.writes["docs.put"]).toBe(20);
    expect(docsOnly.writes["logs.append"]).toBe(0);
  });

  it("the ledger document is the same size after 1,000 reserve + settle pairs as after 10", async () => {
    const measure = async (count: number) => {
      const store = createMemoryStore();
      const budget = createBudget({ store });
      const workflow = budget.scope("workflow", { limits: { tokens: 100_000_000 } });
      const task = budget.scope("task", { limits: { tokens: 1_000_000 }, parents: [workflow] });
      await pairs(task, count);
      const snapshot = (await task.snapshot())._unsafeUnwrap();
      return { json: await ledgerJson(store, "workflow"), snapshot };
    };
    const ten = await measure(10);
    const thousand = await measure(1_000);
    expect(ten.snapshot.settled.tokens).toBe(100);
    expect(thousand.snapshot.settled.tokens).toBe(10_000);
    expect(thousand.snapshot.openReservations).toBe(0);
    // Same shape: only the counters' digits differ (a few bytes), nothing accumulates per operation.
    const shape = (json: string) => json.replace(/"[0-9A-HJKMNP-TV-Z]{26}"/g, "\"ID\"").replace(/\d+/g, "0");
    expect(shape(thousand.json)).toBe(shape(ten.json));
    expect(thousand.json.length - ten.json.length).toBeLessThanOrEqual(16);
    expect(JSON.parse(thousand.json).closed).toEqual([]);
  });

  it("a crash between reserve and settle leaves the reservation charged once, to be settled after restart or expired", async () => {
    const inner = createMemoryStore();
    let now = 1_000;
    const clock = { now: () => now };
    const first = createBudget({ store: inner, clock }).scope("global", { limits: { tokens: 1_000 } });
    const made = (await first.reserve({ tokens: 300 }))._unsafeUnwrap();
    // "Crash": the handle is lost; a new process reads the same store.
    const restarted = createBudget({ store: inner, clock }).scope("global", { limits: { tokens: 1_000 } });
    expect((await restarted.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 300 }, settled: { tokens: 0 }, openReservations: 1 });
    now += 60_000;
    const expired = (await restarted.expireStale(30_000))._unsafeUnwrap();
    expect(expired.expired.map((entry) => entry.id)).toEqual([made.id]);
    expect(expired.snapshot).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 300 }, openReservations: 0 });
    // The old handle's late settle loses to the expiry: conflict, nothing charged twice.
    expect((await made.settle({ tokens: 100 }))._unsafeUnwrapErr().code).toBe("conflict");
    expect((await restarted.reservation(made.id))._unsafeUnwrapErr().code).toBe("conflict");
    expect((await restarted.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0 }, settled: { tokens: 300 } });
  });

  it("a crash between the settle's append and its fold loses nothing and charges once", async () => {
    const inner = createMemoryStore();
    const store = createFaultyStore(inner);
    const scope = createBudget({ store }).scope("global", { limits: { tokens: 1_000, timeMs: 10_000 } });
    const made = (await scope.reserve({ tokens: 300, timeMs: 5_000 }))._unsafeUnwrap();
    (await made.settle({ tokens: 300, timeMs: 1_000 }))._unsafeUnwrap();
    // The fold (the next reserve's write) fails before landing: the close is in the log only.
    store.faults.add({ operation: "docs.put", code: "io_failed", times: 1 });
    expect((await scope.reserve({ tokens: 100 }))._unsafeUnwrapErr().code).toBe("io_failed");
    const stored = JSON.parse(await ledgerJson(inner, "global"));
    expect(Object.keys(stored.open)).toEqual([made.id]);
    // A new process counts the logged close at read time, once.
    const restarted = createBudget({ store: inner }).scope("global", { limits: { tokens: 1_000, timeMs: 10_000 } });
    expect((await restarted.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 0, timeMs: 0 }, settled: { tokens: 300, timeMs: 1_000 } });
    // The fold lands but reports failure: read back, it is not folded twice.
    store.faults.add({ operation: "docs.put", code: "unavailable", times: 1, when: "after" });
    (await scope.reserve({ tokens: 100 }))._unsafeUnwrap();
    const folded = JSON.parse(await ledgerJson(inner, "global"));
    expect(folded.foldedSeq).toBe(1);
    expect(folded.scopes.global.settled).toMatchObject({ tokens: 300, timeMs: 1_000 });
    expect((await restarted.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { tokens: 100 }, settled: { tokens: 300, timeMs: 1_000 } });
    // A second close of the folded reservation is refused by the log, from any handle.
    expect((await made.abandon())._unsafeUnwrapErr().code).toBe("conflict");
    const again = await restarted.reservation(made.id);
    expect(again._unsafeUnwrapErr()).toMatchObject({ code: "conflict", details: { outcome: "settled" } });
    expect((await restarted.snapshot())._unsafeUnwrap().settled.tokens).toBe(300);
  });

  it("a settle appended but not yet folded wins over a later expiry: charged as settled, once", async () => {
    let now = 1_000;
    const store = createMemoryStore();
    const scope = createBudget({ store, clock: { now: () => now } }).scope("global", { limits: { timeMs: 10_000 } });
    const made = (await scope.reserve({ timeMs: 5_000 }))._unsafeUnwrap();
    (await made.settle({ timeMs: 2_000 }))._unsafeUnwrap();
    now += 60_000;
    const result = (await scope.expireStale(30_000))._unsafeUnwrap();
    expect(result.expired).toEqual([]);
    expect(result.snapshot).toMatchObject({ reserved: { timeMs: 0 }, settled: { timeMs: 2_000 }, openReservations: 0 });
    (await scope.reserve({ timeMs: 1 }))._unsafeUnwrap();
    expect((await scope.snapshot())._unsafeUnwrap()).toMatchObject({ reserved: { timeMs: 1 }, settled: { timeMs: 2_000 } });
  });

  it("concurrent settles and reserves never lose a close nor pass a limit", async () => {
    const store = createMemoryStore();
    const scope = createBudget({ store }).scope("shared", { limits: { calls: 30 } });
    const made = await Promise.all(Array.from({ length: 20 }, () => scope.reserve({ calls: 1, tokens: 5 })));
    const settles = made.map((result) => result._unsafeUnwrap().settle({ tokens: 5 }));
    const more = Array.from({ length: 20 }, () => scope.reserve({ calls: 1 }));
    const [settled, reserved] = await Promise.all([Promise.all(settles), Promise.all(more)]);
    expect(settled.every((result) => result.isOk())).toBe(true);
    expect(reserved.filter((result) => result.isOk())).toHaveLength(10);
    const snapshot = (await scope.snapshot())._unsafeUnwrap();
    expect(snapshot).toMatchObject({ reserved: { calls: 10 }, settled: { calls: 20, tokens: 100 }, openReservations: 10 });
  });
});
