import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { addUsage, emptyUsage, type Usage } from "@keel/core";

const count = fc.nat({ max: 10_000_000 });
const maybeCount = fc.option(count, { nil: null });
const usageArbitrary: fc.Arbitrary<Usage> = fc.record({
  inputUncached: maybeCount,
  cacheRead: maybeCount,
  cacheWrite: maybeCount,
  output: maybeCount,
  reasoning: maybeCount,
  // Integral costs keep float addition exact, so the algebraic laws can be checked with toEqual.
  costUsd: fc.option(fc.nat({ max: 1_000_000 }), { nil: null }),
});

describe("addUsage", () => {
  it("null + null = null, null + n = n, n + m = n + m", () => {
    const a = { ...emptyUsage(), output: 3 };
    const b = { ...emptyUsage(), output: 4, cacheRead: 2 };
    expect(addUsage(a, b)).toEqual({ ...emptyUsage(), output: 7, cacheRead: 2 });
    expect(addUsage(emptyUsage(), emptyUsage())).toEqual(emptyUsage());
  });

  it("is commutative and associative with the all-unknown usage as identity", () => {
    fc.assert(
      fc.property(usageArbitrary, usageArbitrary, usageArbitrary, (a, b, c) => {
        expect(addUsage(a, b)).toEqual(addUsage(b, a));
        expect(addUsage(addUsage(a, b), c)).toEqual(addUsage(a, addUsage(b, c)));
        expect(addUsage(a, emptyUsage())).toEqual(a);
      }),
    );
  });

  it("a bucket is unknown in the sum only when unknown in both", () => {
    fc.assert(
      fc.property(usageArbitrary, usageArbitrary, (a, b) => {
        const sum = addUsage(a, b);
        for (const key of Object.keys(sum) as (keyof Usage)[]) {
          expect(sum[key] === null).toBe(a[key] === null && b[key] === null);
        }
      }),
    );
  });
});
