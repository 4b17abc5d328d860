import fc from "fast-check";
import { createBudget, type BudgetScope, type Reservation } from "@keel/budget";
import { BUDGET_DIMENSIONS } from "@keel/budget/schemas";
import { createManualClock } from "@keel/core";
import { createMemoryStore } from "@keel/store";
import { describe, expect, it } from "vitest";

type Step =
  | { kind: "reserve"; scope: number; amounts: { tokens: number; calls: number; timeMs: number } }
  | { kind: "burst"; scope: number; count: number }
  | { kind: "settle"; pick: number; tokens: number | null; timeMs: number | null }
  | { kind: "abandon"; pick: number }
  | { kind: "expire"; scope: number; advance: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("reserve" as const),
    scope: fc.nat(3),
    amounts: fc.record({ tokens: fc.integer({ min: 0, max: 300 }), calls: fc.integer({ min: 0, max: 2 }), timeMs: fc.integer({ min: 0, max: 500 }) }),
  }),
  fc.record({ kind: fc.constant("burst" as const), scope: fc.nat(3), count: fc.integer({ min: 2, max: 6 }) }),
  fc.record({
    kind: fc.constant("settle" as const),
    pick: fc.nat(),
    tokens: fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }),
    timeMs: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant("abandon" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("expire" as const), scope: fc.nat(3), advance: fc.integer({ min: 0, max: 100 }) }),
);

/** Runs steps through the public API over a memory store and checks the ledger after each. */
async function run(steps: Step[]): Promise<void> {
  const clock = createManualClock();
  const budget = createBudget({ store: createMemoryStore(), clock });
  const global = budget.scope("global", { limits: { tokens: 2_000, calls: 12 } });
  const workflow = budget.scope("workflow", { limits: { tokens: 1_200, timeMs: 3_000 }, parents: [global] });
  const scopes: BudgetScope[] = [
    global,
    workflow,
    budget.scope("task-a", { limits: { tokens: 700 }, parents: [workflow] }),
    budget.scope("task-b", { limits: { calls: 5 }, parents: [global] }),
  ];
  const chains = [["global"], ["workflow", "global"], ["task-a", "workflow", "global"], ["task-b", "global"]];
  let open: Reservation[] = [];
  const checkRefusal = (scopeIndex: number, result: Awaited<ReturnType<BudgetScope["reserve"]>>) => {
    if (result.isOk()) {
      open.push(result.value);
      return;
    }
    expect(result.error.code).toBe("budget_exceeded");
    expect(chains[scopeIndex]).toContain(result.error.details["limitingScope"]);
  };
  for (const current of steps) {
    if (current.kind === "reserve") checkRefusal(current.scope, await scopes[current.scope]!.reserve(current.amounts));
    if (current.kind === "burst") {
      const results = await Promise.all(Array.from({ length: current.count }, () => scopes[current.scope]!.reserve({ tokens: 90, calls: 1 })));
      for (const result of results) checkRefusal(current.scope, result);
    }
    if ((current.kind === "settle" || current.kind === "abandon") && open.length > 0) {
      const [reservation] = open.splice(current.pick % open.length, 1);
      const closed = current.kind === "settle" ? await reservation!.settle({ tokens: current.tokens, timeMs: current.timeMs }) : await reservation!.abandon();
      const settlement = closed._unsafeUnwrap().settlement;
      expect(settlement.refunded.tokens + settlement.refunded.calls + settlement.refunded.costMicroUsd).toBe(0);
    }
    if (current.kind === "expire") {
      clock.advance(current.advance);
      const expired = (await scopes[current.scope]!.expireStale(50))._unsafeUnwrap().expired.map((entry) => entry.id);
      open = open.filter((reservation) => !expired.includes(reservation.id));
    }
    for (const scope of scopes) {
      const snapshot = (await scope.snapshot())._unsafeUnwrap();
      for (const dimension of BUDGET_DIMENSIONS) {
        const own = scope.limits[dimension];
        if (!own || own.scope !== scope.id) continue;
        expect(snapshot.reserved[dimension] + snapshot.settled[dimension] - snapshot.overrun[dimension]).toBeLessThanOrEqual(own.limit);
      }
    }
  }
}

describe("budget invariants through the public API", () => {
  it("never above a limit after any sequence of reserve/settle/abandon/expire (concurrent bursts included); refusals name a scope of the chain; only time is refunded", async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 30 }), run), { numRuns: 60 });
  });
});
