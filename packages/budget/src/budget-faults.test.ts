import { createBudget } from "@keel/budget";
import { createMemoryStore } from "@keel/store";
import { createFaultyStore } from "@keel/testkit";
import { describe, expect, it } from "vitest";

const setup = () => {
  const store = createFaultyStore(createMemoryStore());
  const budget = createBudget({ store });
  const scope = budget.scope("global", { limits: { tokens: 1_000 } });
  return { store, scope };
};

describe("budget under storage faults (nothing is lost, nothing is double-counted)", () => {
  it("a write that fails before landing reserves nothing and reports the store's code", async () => {
    const { store, scope } = setup();
    store.faults.add({ operation: "docs.put", code: "io_failed", times: 1 });
    expect((await scope.reserve({ tokens: 100 }))._unsafeUnwrapErr().code).toBe("io_failed");
    const snapshot = (await scope.snapshot())._unsafeUnwrap();
    expect(snapshot.reserved.tokens).toBe(0);
    expect(snapshot.openReservations).toBe(0);
  });

  it("a reservation whose write landed but reported failure is confirmed by reading back, not lost or repeated", async () => {
    const { store, scope } = setup();
    store.faults.add({ operation: "docs.put", code: "io_failed", times: 1, when: "after" });
    const reservation = (await scope.reserve({ tokens: 100 }))._unsafeUnwrap();
    expect(store.faults.hits()).toHaveLength(1);
    expect((await scope.snapshot())._unsafeUnwrap().reserved.tokens).toBe(100);
    // The settle's one write is the close log's append: it lands, reports failure, and its retry is deduplicated.
    store.faults.add({ operation: ["docs.put", "logs.append"], code: "unavailable", times: 1, when: "after" });
    const settled = (await reservation.settle({ tokens: 80 }))._unsafeUnwrap();
    expect(store.faults.hits().at(-1)?.operation).toBe("logs.append");
    expect(settled.settled.tokens).toBe(100);
    expect(settled.reserved.tokens).toBe(0);
  });

  it("a failing read is reported and changes nothing", async () => {
    const { store, scope } = setup();
    const reservation = (await scope.reserve({ tokens: 100 }))._unsafeUnwrap();
    store.faults.add({ operation: "docs.get", code: "io_failed", times: 1 });
    expect((await reservation.settle({ tokens: 100 }))._unsafeUnwrapErr().code).toBe("io_failed");
    const settled = (await reservation.settle({ tokens: 100 }))._unsafeUnwrap();
    expect(settled.settled.tokens).toBe(100);
  });

  it("a settle whose write failed before landing can be retried and is charged once", async () => {
    const { store, scope } = setup();
    const reservation = (await scope.reserve({ tokens: 100, timeMs: 1_000 }))._unsafeUnwrap();
    // Twice: a settle retries an ambiguous append once by itself.
    store.faults.add({ operation: ["docs.put", "logs.append"], code: "io_failed", times: 2 });
    expect((await reservation.settle({ timeMs: 400 }))._unsafeUnwrapErr().code).toBe("io_failed");
    expect((await scope.snapshot())._unsafeUnwrap().reserved.timeMs).toBe(1_000);
    const settled = (await reservation.settle({ timeMs: 400 }))._unsafeUnwrap();
    expect(settled.settled).toMatchObject({ tokens: 100, timeMs: 400 });
  });
});
