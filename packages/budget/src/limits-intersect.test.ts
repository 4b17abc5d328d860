import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { intersectLimits } from "@keel/budget";
import { BUDGET_DIMENSIONS, type LimitLevel } from "@keel/budget/schemas";

const name = fc.constantFrom("global", "workflow", "profile", "role", "task", "session", "role.engineer");
const limitValue = fc.integer({ min: 0, max: 1_000_000 });
const level: fc.Arbitrary<LimitLevel> = fc.record({
  name,
  limits: fc.record(
    { tokens: limitValue, timeMs: limitValue, calls: limitValue, costMicroUsd: limitValue },
    { requiredKeys: [] },
  ),
});

const unwrap = (levels: LimitLevel[]) => intersectLimits(...levels)._unsafeUnwrap();

describe("intersectLimits", () => {
  it("takes the strictest limit per dimension and names the level that set it", () => {
    const limits = unwrap([
      { name: "global", limits: { tokens: 1_000_000, costMicroUsd: 5_000_000 } },
      { name: "role", limits: { tokens: 200_000, calls: 40 } },
      { name: "task", limits: { calls: 60 } },
    ]);
    expect(limits).toEqual({
      tokens: { limit: 200_000, source: "role" },
      calls: { limit: 40, source: "role" },
      costMicroUsd: { limit: 5_000_000, source: "global" },
    });
  });

  it("names the level whose name sorts first when levels tie on the strictest limit, in either order", () => {
    const [task, global] = [{ name: "task", limits: { tokens: 5 } }, { name: "global", limits: { tokens: 5, calls: 9 } }];
    expect(unwrap([task, global]).tokens).toEqual({ limit: 5, source: "global" });
    expect(unwrap([global, task]).tokens).toEqual({ limit: 5, source: "global" });
  });

  it("leaves a dimension no level limits unlimited, and no levels at all is no limit", () => {
    expect(unwrap([{ name: "global", limits: { tokens: 5 } }]).timeMs).toBeUndefined();
    expect(unwrap([])).toEqual({});
  });

  it("is commutative: any order of the levels gives the same limits and sources", () => {
    fc.assert(
      fc.property(fc.array(level, { maxLength: 6 }).chain((levels) => fc.tuple(fc.constant(levels), fc.shuffledSubarray(levels, { minLength: levels.length, maxLength: levels.length }))), ([levels, shuffled]) => {
        expect(unwrap(shuffled)).toEqual(unwrap(levels));
      }),
    );
  });

  it("is idempotent: repeating levels changes nothing", () => {
    fc.assert(
      fc.property(fc.array(level, { maxLength: 6 }), (levels) => {
        expect(unwrap([...levels, ...levels])).toEqual(unwrap(levels));
      }),
    );
  });

  it("each effective limit is the minimum over the levels and is set by a level with that value", () => {
    fc.assert(
      fc.property(fc.array(level, { maxLength: 6 }), (levels) => {
        const effective = unwrap(levels);
        for (const dimension of BUDGET_DIMENSIONS) {
          const values = levels.flatMap((entry) => (entry.limits[dimension] === undefined ? [] : [entry.limits[dimension]!]));
          const result = effective[dimension];
          if (values.length === 0) {
            expect(result).toBeUndefined();
            continue;
          }
          expect(result?.limit).toBe(Math.min(...values));
          expect(levels.some((entry) => entry.name === result?.source && entry.limits[dimension] === result?.limit)).toBe(true);
        }
      }),
    );
  });

  it("answers malformed levels with invalid_input", () => {
    const bad: unknown[] = [
      { name: "global", limits: { tokens: -1 } },
      { name: "global", limits: { tokens: 1.5 } },
      { name: "global", limits: { dollars: 5 } },
      { name: "../x", limits: {} },
      { limits: {} },
      "global",
    ];
    for (const entry of bad) {
      const result = intersectLimits(entry as LimitLevel);
      expect(result.isErr() && result.error.code).toBe("invalid_input");
    }
  });
});
