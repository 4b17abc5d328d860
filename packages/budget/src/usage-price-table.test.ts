import fc from "fast-check";
import { actualsFromUsage, createPriceTable, priceUsage, type ModelPrice } from "@keel/budget";
import { DEFAULT_PRICES, defaultPriceTable } from "@keel/budget/schemas";
import { emptyUsage, type Usage } from "@keel/core";
import { describe, expect, it } from "vitest";

const usage = (fields: Partial<Usage>): Usage => ({ ...emptyUsage(), ...fields });
const price: ModelPrice = { model: "house-model", inputUsdPerMTok: 2, outputUsdPerMTok: 8, cacheReadUsdPerMTok: 0.2, cacheWriteUsdPerMTok: null, source: "contract 2026" };

describe("price table", () => {
  it("records a source for every default price", () => {
    for (const entry of DEFAULT_PRICES) expect(entry.source).toMatch(/^https:\/\//);
  });

  it("matches ids, aliases, dated snapshots and provider-qualified ids, and nothing else", () => {
    expect(defaultPriceTable.lookup("claude-sonnet-4-5")?.model).toBe("claude-sonnet-4-5");
    expect(defaultPriceTable.lookup("claude-sonnet-4-5-20250929")?.model).toBe("claude-sonnet-4-5");
    expect(defaultPriceTable.lookup("claude-sonnet-4@20250514")?.model).toBe("claude-sonnet-4");
    expect(defaultPriceTable.lookup("gpt-5-2025-08-07")?.model).toBe("gpt-5");
    expect(defaultPriceTable.lookup("gpt-5-mini")?.model).toBe("gpt-5-mini");
    expect(defaultPriceTable.lookup("anthropic/Claude-Haiku-4-5")?.model).toBe("claude-haiku-4-5");
    expect(defaultPriceTable.lookup("claude-opus-4.6")?.model).toBe("claude-opus-4-6");
    for (const unknown of ["claude-sonnet-4-6", "gpt-5.1-codex", "gpt-5-nano", "Claude 4 Sonnet", ""]) {
      expect(defaultPriceTable.lookup(unknown)).toBeUndefined();
    }
  });

  it("rejects malformed prices and an id listed twice at once", () => {
    expect(() => createPriceTable([{ ...price, inputUsdPerMTok: -1 }])).toThrowError(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createPriceTable([{ ...price, source: "" }])).toThrowError(expect.objectContaining({ code: "invalid_input" }));
    expect(() => createPriceTable([price, { ...price, model: "other", aliases: ["HOUSE-MODEL"] }])).toThrowError(
      expect.objectContaining({ code: "invalid_input" }),
    );
  });
});

describe("priceUsage", () => {
  const table = createPriceTable([price]);

  it("prices every known bucket and records the price's source", () => {
    const priced = priceUsage(usage({ inputUncached: 1_000, cacheRead: 10_000, cacheWrite: 0, output: 500, reasoning: 100 }), "house-model", table)._unsafeUnwrap();
    expect(priced).toEqual({ costUsd: 0.0088, costMicroUsd: 8_800, basis: "priced", source: "contract 2026", flagged: false, unknownBuckets: [] });
  });

  it("makes an unpriced model cost null and flags it", () => {
    expect(priceUsage(usage({ inputUncached: 1, output: 1 }), "mystery", table)._unsafeUnwrap()).toMatchObject({ costUsd: null, costMicroUsd: null, basis: "unpriced", flagged: true });
    expect(priceUsage(usage({ inputUncached: 1, output: 1 }), null, table)._unsafeUnwrap().basis).toBe("unpriced");
  });

  it("treats an unknown bucket with a price as a flagged lower bound, never as 0", () => {
    const priced = priceUsage(usage({ inputUncached: 1_000, output: 100, cacheRead: null, cacheWrite: 5 }), "house-model", table)._unsafeUnwrap();
    expect(priced).toMatchObject({ basis: "partial", flagged: true, costMicroUsd: null, unknownBuckets: ["cacheRead", "cacheWrite"] });
    expect(priced.costUsd).toBeCloseTo(0.0028, 12);
  });

  it("prefers a reported cost", () => {
    expect(priceUsage(usage({ output: 10, costUsd: 0.5 }), "mystery", table)._unsafeUnwrap()).toMatchObject({ basis: "reported", costMicroUsd: 500_000 });
  });

  it("never prices below the cost of the known buckets and is monotone in every bucket", () => {
    const count = fc.integer({ min: 0, max: 10_000_000 });
    fc.assert(
      fc.property(count, count, count, count, count, (inputUncached, cacheRead, cacheWrite, output, extra) => {
        const base = priceUsage(usage({ inputUncached, cacheRead, cacheWrite, output }), "claude-sonnet-4-5")._unsafeUnwrap();
        const more = priceUsage(usage({ inputUncached, cacheRead, cacheWrite, output: output + extra }), "claude-sonnet-4-5")._unsafeUnwrap();
        expect(base.basis).toBe("priced");
        expect(more.costMicroUsd!).toBeGreaterThanOrEqual(base.costMicroUsd!);
        expect(base.costMicroUsd!).toBeGreaterThanOrEqual(base.costUsd! * 1e6 - 1e-6);
      }),
    );
  });

  it("answers a malformed usage with invalid_input", () => {
    expect(priceUsage({ ...emptyUsage(), output: -1 }, "gpt-5")._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(actualsFromUsage({ ...emptyUsage(), extra: 1 } as Usage)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(actualsFromUsage(null, { durationMs: -1 })._unsafeUnwrapErr().code).toBe("invalid_input");
  });
});

describe("actualsFromUsage", () => {
  it("sums the known token buckets and passes a known duration", () => {
    const { actual } = actualsFromUsage(usage({ inputUncached: 10, cacheRead: 100, output: 5, reasoning: 2 }), { durationMs: 1_500 })._unsafeUnwrap();
    expect(actual).toEqual({ tokens: 117, timeMs: 1_500, costMicroUsd: null });
    expect(actualsFromUsage(null)._unsafeUnwrap()).toEqual({ actual: { tokens: null, timeMs: null, costMicroUsd: null }, cost: null });
  });
});
