import fc from "fast-check";
import { calibrationDrift, type TaskRecord } from "@keel/budget";
import { describe, expect, it } from "vitest";

const record = (tier: string, estimated: TaskRecord["estimated"], actual: TaskRecord["actual"]): TaskRecord => ({ tier, estimated, actual });

describe("calibrationDrift", () => {
  it("reports per tier the median ratio and spread of actual over estimated calls and tokens", () => {
    const drift = calibrationDrift([
      record("small", { calls: 2, tokens: 1_000 }, { calls: 2, tokens: 1_500 }),
      record("small", { calls: 2, tokens: 1_000 }, { calls: 4, tokens: 2_000 }),
      record("small", { calls: 2, tokens: 1_000 }, { calls: 3, tokens: 1_000 }),
      record("large", { calls: 10, tokens: null }, { calls: 5, tokens: 90_000 }),
      record("large", { calls: 0, tokens: 50_000 }, { calls: 3 }),
    ])._unsafeUnwrap();
    expect(drift.map((tier) => tier.tier)).toEqual(["large", "small"]);
    const small = drift[1]!;
    expect(small.tasks).toBe(3);
    expect(small.tokens).toEqual({ samples: 3, medianRatio: 1.5, spread: 0.5, p25: 1.25, p75: 1.75, min: 1, max: 2 });
    expect(small.calls?.medianRatio).toBe(1.5);
    const large = drift[0]!;
    expect(large.calls).toMatchObject({ samples: 1, medianRatio: 0.5, spread: 0 });
    expect(large.tokens).toBeNull();
    expect(large.skipped).toEqual({ calls: 1, tokens: 2 });
  });

  it("ignores the other fields of a task record and rejects malformed ones", () => {
    const loose = { tier: "t", taskId: "x", status: "done", estimated: { calls: 1, minutes: 3 }, actual: { calls: 2 } };
    expect(calibrationDrift([loose as TaskRecord])._unsafeUnwrap()[0]?.calls?.medianRatio).toBe(2);
    for (const bad of [{ tier: "", estimated: {}, actual: {} }, { tier: "t", estimated: { calls: -1 }, actual: {} }, { tier: "t" }]) {
      expect(calibrationDrift([bad as TaskRecord])._unsafeUnwrapErr().code).toBe("invalid_input");
    }
  });

  it("does not depend on record order, gives ratio 1 for exact estimates and scales with the actuals", () => {
    const count = fc.integer({ min: 1, max: 100_000 });
    const records = fc.array(fc.record({ tier: fc.constantFrom("a", "b", "c"), estimated: fc.record({ calls: count, tokens: count }), actual: fc.record({ calls: count, tokens: count }) }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(records, fc.integer({ min: 2, max: 5 }), (tasks, factor) => {
        const drift = calibrationDrift(tasks)._unsafeUnwrap();
        expect(calibrationDrift([...tasks].reverse())._unsafeUnwrap()).toEqual(drift);
        const exact = calibrationDrift(tasks.map((task) => ({ ...task, actual: task.estimated })))._unsafeUnwrap();
        for (const tier of exact) expect(tier.tokens).toMatchObject({ medianRatio: 1, spread: 0 });
        const scaled = calibrationDrift(tasks.map((task) => ({ ...task, actual: { calls: task.actual.calls! * factor, tokens: task.actual.tokens! * factor } })))._unsafeUnwrap();
        scaled.forEach((tier, index) => {
          expect(tier.tokens!.medianRatio).toBeCloseTo(drift[index]!.tokens!.medianRatio * factor, 9);
          expect(tier.tokens!.spread).toBeGreaterThanOrEqual(0);
          expect(tier.tokens!.min).toBeLessThanOrEqual(tier.tokens!.medianRatio);
          expect(tier.tokens!.medianRatio).toBeLessThanOrEqual(tier.tokens!.max);
        });
      }),
    );
  });
});
