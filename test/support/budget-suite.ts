import { createEventBus, createManualClock, type KeelEvent, type ManualClock } from "@keel/core";
import { createBudget, type Budget, type BudgetScope } from "@keel/budget";
import type { KeelStore } from "@keel/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** How the suite gets a fresh, isolated store for each test. */
export interface BudgetSuiteTarget {
  /** A fresh store and how to dispose of it. */
  create(): Promise<{ store: KeelStore; dispose(): Promise<void> }>;
}

interface Fixture {
  store: KeelStore;
  clock: ManualClock;
  events: KeelEvent[];
  budget: Budget;
  dispose(): Promise<void>;
}

/**
 * The behaviour of `@keel/budget` over one store adapter. Each adapter's test file calls this in
 * a few lines (memory, filesystem, and SQLite/Postgres once they exist).
 */
export function describeBudgetSuite(name: string, target: BudgetSuiteTarget): void {
  describe(`budget over ${name}`, () => {
    let fixture: Fixture;
    beforeEach(async () => {
      const { store, dispose } = await target.create();
      const clock = createManualClock();
      const bus = createEventBus({ clock });
      const events: KeelEvent[] = [];
      bus.on("*", (event) => events.push(event));
      fixture = { store, clock, events, budget: createBudget({ store, clock, events: bus }), dispose };
    });
    afterEach(async () => {
      await fixture.dispose();
    });

    const tree = () => {
      const global = fixture.budget.scope("global", { limits: { tokens: 10_000, costMicroUsd: 1_000_000 } });
      const workflow = fixture.budget.scope("workflow-1", { limits: { tokens: 5_000, calls: 10 }, parents: [global] });
      const task = fixture.budget.scope("task-1", { limits: { tokens: 8_000, timeMs: 60_000 }, parents: [workflow] });
      return { global, workflow, task };
    };
    const snapshot = async (scope: BudgetScope) => (await scope.snapshot())._unsafeUnwrap();

    it("reserves before work and charges every scope of the chain", async () => {
      const { global, workflow, task } = tree();
      const reservation = (await task.reserve({ tokens: 1_000, calls: 1, timeMs: 30_000 }))._unsafeUnwrap();
      expect(reservation.scope).toBe("task-1");
      expect(reservation.chain).toEqual(["task-1", "workflow-1", "global"]);
      for (const scope of [global, workflow, task]) {
        expect((await snapshot(scope)).reserved).toEqual({ tokens: 1_000, timeMs: 30_000, calls: 1, costMicroUsd: 0 });
      }
      const taskSnapshot = await snapshot(task);
      expect(taskSnapshot.limits.tokens).toEqual({ limit: 5_000, source: "workflow-1", scope: "workflow-1" });
      expect(taskSnapshot.limits.timeMs).toEqual({ limit: 60_000, source: "task-1", scope: "task-1" });
      expect(taskSnapshot.remaining).toEqual({ tokens: 4_000, timeMs: 30_000, calls: 9, costMicroUsd: 1_000_000 });
      expect(taskSnapshot.bindingScope.tokens).toBe("workflow-1");
      expect(taskSnapshot.openReservations).toBe(1);
    });

    it("charges a shared ancestor once when a scope has several parents (a diamond)", async () => {
      const root = fixture.budget.scope("root", { limits: { tokens: 1_000 } });
      const left = fixture.budget.scope("left", { parents: [root] });
      const right = fixture.budget.scope("right", { limits: { tokens: 300 }, parents: [root] });
      const both = fixture.budget.scope("both", { parents: [left, right] });
      const reservation = (await both.reserve({ tokens: 200 }))._unsafeUnwrap();
      expect(reservation.chain).toEqual(["both", "left", "root", "right"]);
      expect((await snapshot(root)).reserved.tokens).toBe(200);
      expect((await both.reserve({ tokens: 150 }))._unsafeUnwrapErr().details).toMatchObject({ limitingScope: "right", remaining: 100 });
    });

    it("refuses amounts a ledger could not count exactly, even where nothing is limited", async () => {
      const root = fixture.budget.scope("unlimited");
      (await root.reserve({ tokens: Number.MAX_SAFE_INTEGER - 10 }))._unsafeUnwrap();
      const refused = (await root.reserve({ tokens: 11 }))._unsafeUnwrapErr();
      expect(refused.code).toBe("budget_exceeded");
      expect(refused.details).toMatchObject({ limitingScope: "unlimited", level: "integer-range", remaining: 10 });
    });

    it("a child tightens but never loosens its parents' limits", async () => {
      const { task } = tree();
      expect(task.limits.tokens?.limit).toBe(5_000);
      const refused = await task.reserve({ tokens: 6_000 });
      expect(refused._unsafeUnwrapErr().code).toBe("budget_exceeded");
      expect(refused._unsafeUnwrapErr().details).toMatchObject({ limitingScope: "workflow-1", dimension: "tokens", asked: 6_000, remaining: 5_000 });
    });

    it("refuses with budget_exceeded naming the limiting scope, dimension, amount asked and what remains, and changes nothing", async () => {
      const { global, workflow, task } = tree();
      const other = fixture.budget.scope("task-2", { parents: [workflow] });
      (await other.reserve({ tokens: 4_500 }))._unsafeUnwrap();
      const before = await snapshot(global);
      const refused = (await task.reserve({ tokens: 600, calls: 1 }))._unsafeUnwrapErr();
      expect(refused.code).toBe("budget_exceeded");
      expect(refused.details).toMatchObject({
        scope: "task-1",
        limitingScope: "workflow-1",
        level: "workflow-1",
        dimension: "tokens",
        asked: 600,
        remaining: 500,
        limit: 5_000,
      });
      expect(await snapshot(global)).toEqual(before);
      expect((await snapshot(task)).reserved.calls).toBe(0);
      const event = fixture.events.find((entry) => entry.type === "budget.refused");
      expect(event).toMatchObject({ scope: "task-1", limitingScope: "workflow-1", dimensions: ["tokens"] });
    });

    it("reports named levels as the source of a scope's limits", async () => {
      const role = fixture.budget.scope("role-engineer", {
        limits: [
          { name: "profile", limits: { tokens: 3_000 } },
          { name: "role", limits: { tokens: 4_000, calls: 2 } },
        ],
      });
      const refused = (await role.reserve({ tokens: 3_500 }))._unsafeUnwrapErr();
      expect(refused.details).toMatchObject({ limitingScope: "role-engineer", level: "profile", remaining: 3_000 });
      expect((await snapshot(role)).limits.calls).toEqual({ limit: 2, source: "role", scope: "role-engineer" });
    });

    it("settles once: tokens as reserved, unused time refunded, cost as reported, calls as reserved", async () => {
      const { global, task } = tree();
      const reservation = (await task.reserve({ tokens: 2_000, timeMs: 40_000, calls: 1, costMicroUsd: 50_000 }))._unsafeUnwrap();
      const settled = (await reservation.settle({ tokens: 1_200, timeMs: 10_000, costMicroUsd: 31_000 }))._unsafeUnwrap();
      expect(settled.settlement.charged).toEqual({ tokens: 2_000, timeMs: 10_000, calls: 1, costMicroUsd: 31_000 });
      expect(settled.settlement.refunded).toEqual({ tokens: 0, timeMs: 30_000, calls: 0, costMicroUsd: 19_000 });
      expect(settled.reserved).toEqual({ tokens: 0, timeMs: 0, calls: 0, costMicroUsd: 0 });
      expect(settled.settled).toEqual({ tokens: 2_000, timeMs: 10_000, calls: 1, costMicroUsd: 31_000 });
      expect((await snapshot(global)).settled.tokens).toBe(2_000);
      const again = (await reservation.settle({ tokens: 1 }))._unsafeUnwrapErr();
      expect(again.code).toBe("conflict");
      expect(again.retryable).toBe(false);
      expect(again.details).toMatchObject({ outcome: "settled" });
      expect((await reservation.abandon())._unsafeUnwrapErr().code).toBe("conflict");
      expect((await snapshot(global)).settled.tokens).toBe(2_000);
    });

    it("charges and flags tokens above the reservation as an overrun", async () => {
      const { task } = tree();
      const reservation = (await task.reserve({ tokens: 1_000 }))._unsafeUnwrap();
      const settled = (await reservation.settle({ tokens: 1_400 }))._unsafeUnwrap();
      expect(settled.settlement.overrun.tokens).toBe(400);
      expect(settled.settled.tokens).toBe(1_400);
      expect(settled.overrun.tokens).toBe(400);
      const event = fixture.events.find((entry) => entry.type === "budget.settled");
      expect(event).toMatchObject({ reservationId: reservation.id, details: { overrun: { tokens: 400 } } });
    });

    it("keeps the whole reservation when abandoned, and charges unknown actuals as reserved", async () => {
      const { task } = tree();
      const abandoned = (await (await task.reserve({ tokens: 700, timeMs: 9_000, calls: 1 }))._unsafeUnwrap().abandon())._unsafeUnwrap();
      expect(abandoned.settlement).toMatchObject({ outcome: "abandoned", charged: { tokens: 700, timeMs: 9_000, calls: 1 } });
      const unknown = (await (await task.reserve({ tokens: 100, timeMs: 1_000 }))._unsafeUnwrap().settle({ tokens: null }))._unsafeUnwrap();
      expect(unknown.settlement.charged).toMatchObject({ tokens: 100, timeMs: 1_000 });
      expect(unknown.settled).toMatchObject({ tokens: 800, timeMs: 10_000, calls: 1 });
    });

    it("finds and expires reservations never settled, keeping them charged", async () => {
      const { global, workflow, task } = tree();
      const old = (await task.reserve({ tokens: 300 }))._unsafeUnwrap();
      fixture.clock.advance(60_000);
      const recent = (await task.reserve({ tokens: 200 }))._unsafeUnwrap();
      const open = (await workflow.openReservations())._unsafeUnwrap();
      expect(open.map((entry) => entry.id)).toEqual([old.id, recent.id]);
      expect(open[0]).toMatchObject({ scope: "task-1", ageMs: 60_000, amounts: { tokens: 300 } });
      const result = (await global.expireStale(30_000))._unsafeUnwrap();
      expect(result.expired.map((entry) => entry.id)).toEqual([old.id]);
      expect(result.snapshot).toMatchObject({ reserved: { tokens: 200 }, settled: { tokens: 300 }, openReservations: 1 });
      expect((await old.settle({ tokens: 10 }))._unsafeUnwrapErr().details).toMatchObject({ outcome: "expired" });
      expect((await recent.settle({ tokens: 150 }))._unsafeUnwrap().settled.tokens).toBe(500);
      expect((await global.expireStale(0))._unsafeUnwrap().expired).toEqual([]);
    });

    it("expires a reservation made exactly olderThanMs ago, and not one a millisecond younger", async () => {
      const { global, task } = tree();
      const edge = (await task.reserve({ tokens: 100 }))._unsafeUnwrap();
      fixture.clock.advance(1);
      const younger = (await task.reserve({ tokens: 100 }))._unsafeUnwrap();
      fixture.clock.advance(29_999);
      const result = (await global.expireStale(30_000))._unsafeUnwrap();
      expect(result.expired.map((entry) => entry.id)).toEqual([edge.id]);
      expect((await younger.settle({ tokens: 100 }))._unsafeUnwrap().settlement.outcome).toBe("settled");
    });

    it("reaches a reservation by id from another handle (e.g. after a restart)", async () => {
      const { task } = tree();
      const made = (await task.reserve({ tokens: 400, calls: 1 }))._unsafeUnwrap();
      const later = createBudget({ store: fixture.store, clock: fixture.clock });
      const global = later.scope("global", { limits: { tokens: 10_000, costMicroUsd: 1_000_000 } });
      const found = (await global.reservation(made.id))._unsafeUnwrap();
      expect(found).toMatchObject({ id: made.id, scope: "task-1", amounts: { tokens: 400, calls: 1 } });
      expect((await found.settle({ tokens: 100 }))._unsafeUnwrap().settled.tokens).toBe(400);
      expect((await global.reservation(made.id))._unsafeUnwrapErr().code).toBe("conflict");
      expect((await global.reservation("01UNKNOWN"))._unsafeUnwrapErr().code).toBe("not_found");
    });

    it("emits budget.reserved and budget.settled after the change, and each warning threshold once", async () => {
      const { task } = tree();
      const first = (await task.reserve({ tokens: 3_000 }))._unsafeUnwrap();
      expect(fixture.events.filter((event) => event.type === "budget.threshold")).toEqual([]);
      (await first.settle({ tokens: 3_000 }))._unsafeUnwrap();
      (await task.reserve({ tokens: 1_100 }))._unsafeUnwrap();
      (await task.reserve({ tokens: 100 }))._unsafeUnwrap();
      const thresholds = fixture.events.filter((event) => event.type === "budget.threshold");
      expect(thresholds).toHaveLength(1);
      expect(thresholds[0]).toMatchObject({ scope: "workflow-1", dimensions: ["tokens"], details: { percent: 80, limit: 5_000, used: 4_100 } });
      const types = fixture.events.map((event) => event.type);
      expect(types.filter((type) => type === "budget.reserved")).toHaveLength(3);
      expect(types.filter((type) => type === "budget.settled")).toHaveLength(1);
      const reserved = fixture.events.find((event) => event.type === "budget.reserved");
      expect(reserved).toMatchObject({ scope: "task-1", dimensions: ["tokens"], amounts: { tokens: 3_000 }, reservationId: first.id });
    });

    it("warns again when a limit is raised (pause, raise, continue)", async () => {
      const root = fixture.budget.scope("root", { limits: { calls: 10 } });
      (await root.reserve({ calls: 9 }))._unsafeUnwrap();
      const raised = fixture.budget.scope("root", { limits: { calls: 20 } });
      (await raised.reserve({ calls: 8 }))._unsafeUnwrap();
      const thresholds = fixture.events.filter((event) => event.type === "budget.threshold");
      expect(thresholds.map((event) => event.details?.["limit"])).toEqual([10, 20]);
    });

    it("never lets concurrent reservations together pass a limit", async () => {
      const root = fixture.budget.scope("shared", { limits: { calls: 25 } });
      const results = await Promise.all(Array.from({ length: 40 }, () => root.reserve({ calls: 1 })));
      expect(results.filter((result) => result.isOk())).toHaveLength(25);
      for (const refused of results.filter((result) => result.isErr())) {
        expect(refused._unsafeUnwrapErr().details).toMatchObject({ limitingScope: "shared", dimension: "calls" });
      }
      expect((await snapshot(root)).reserved.calls).toBe(25);
    });

    it("keeps scope ids that are also Object.prototype names apart", async () => {
      const root = fixture.budget.scope("constructor", { limits: { tokens: 10 } });
      const child = fixture.budget.scope("toString", { parents: [root] });
      (await child.reserve({ tokens: 4 }))._unsafeUnwrap();
      expect((await snapshot(root)).remaining.tokens).toBe(6);
      expect((await snapshot(child)).reserved.tokens).toBe(4);
    });

    it("answers bad input with invalid_input and writes nothing", async () => {
      const { task } = tree();
      for (const amounts of [{ tokens: -1 }, { tokens: 1.5 }, { dollars: 3 }, { tokens: Number.NaN }, null]) {
        const result = await task.reserve(amounts as never);
        expect(result._unsafeUnwrapErr().code).toBe("invalid_input");
      }
      const reservation = (await task.reserve({ tokens: 10 }))._unsafeUnwrap();
      for (const actual of [{ tokens: -5 }, { calls: 1 }, { timeMs: "10" }]) {
        expect((await reservation.settle(actual as never))._unsafeUnwrapErr().code).toBe("invalid_input");
      }
      expect((await task.expireStale(-1))._unsafeUnwrapErr().code).toBe("invalid_input");
      expect((await snapshot(task)).openReservations).toBe(1);
    });

    it("throws invalid_input at once for a malformed scope", () => {
      const other = createBudget({ store: fixture.store });
      const stranger = other.scope("global");
      const a = fixture.budget.scope("root-a");
      const b = fixture.budget.scope("root-b");
      const bad: [string, object | undefined][] = [
        ["../escape", undefined],
        ["ok", { limits: { tokens: -1 } }],
        ["ok", { parents: [stranger] }],
        ["ok", { parents: [a, b] }],
        ["ok", { warnAtPercent: [0] }],
        ["ok", { unknown: true }],
        ["root-a", { parents: [fixture.budget.scope("child", { parents: [a] })] }],
      ];
      for (const [id, options] of bad) {
        expect(() => fixture.budget.scope(id, options as never)).toThrowError(expect.objectContaining({ code: "invalid_input" }));
      }
    });

    it("fails closed with corrupt when the ledger document is not a ledger", async () => {
      const root = fixture.budget.scope("broken", { limits: { tokens: 10 } });
      (await fixture.store.docs.put(["budget", "broken"], { schema: 1, nonsense: true }, { create: true }))._unsafeUnwrap();
      expect((await root.reserve({ tokens: 1 }))._unsafeUnwrapErr().code).toBe("corrupt");
      expect((await root.snapshot())._unsafeUnwrapErr().code).toBe("corrupt");
    });
  });
}
