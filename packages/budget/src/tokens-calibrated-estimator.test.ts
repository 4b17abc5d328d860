import fc from "fast-check";
import { createCalibratedEstimator, estimateThreadInput } from "@keel/budget";
import { emptyUsage, estimateTokens } from "@keel/core";
import { describe, expect, it } from "vitest";

describe("calibrated token estimate", () => {
  it("falls back to estimateTokens of the whole text, with the margin, without a baseline", () => {
    const text = "x".repeat(3_000);
    expect(estimateThreadInput(null, { newText: "new", fullText: text })._unsafeUnwrap()).toEqual({
      tokens: Math.ceil(estimateTokens(text) * 1.1),
      basis: "estimated",
      estimatedPart: Math.ceil(estimateTokens(text) * 1.1),
    });
  });

  it("builds on the last reported input and output, estimating only the new part", () => {
    const estimate = estimateThreadInput({ inputTokens: 40_000, outputTokens: 500 }, { newText: "y".repeat(300) }, { marginPercent: 20 })._unsafeUnwrap();
    expect(estimate).toEqual({ tokens: 40_000 + 500 + 120, basis: "calibrated", estimatedPart: 120 });
  });

  it("never estimates below the reported baseline, and more new text never estimates less", () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.nat(10_000), fc.string(), fc.string(), (input, output, a, b) => {
        const baseline = { inputTokens: input, outputTokens: output };
        const short = estimateThreadInput(baseline, { newText: a })._unsafeUnwrap();
        const long = estimateThreadInput(baseline, { newText: a + b })._unsafeUnwrap();
        expect(short.tokens).toBeGreaterThanOrEqual(input + output);
        expect(long.tokens).toBeGreaterThanOrEqual(short.tokens);
      }),
    );
  });

  it("remembers each thread's last usage through observe, and forgets it", () => {
    const estimator = createCalibratedEstimator({ estimator: (text) => text.length, marginPercent: 0 });
    expect(estimator.estimate("t1", { newText: "abc", fullText: "abcdef" })._unsafeUnwrap()).toMatchObject({ tokens: 6, basis: "estimated" });
    estimator.observe("t1", { ...emptyUsage(), inputUncached: 100, cacheRead: 900, output: 50 });
    expect(estimator.estimate("t1", { newText: "abc" })._unsafeUnwrap()).toEqual({ tokens: 1_053, basis: "calibrated", estimatedPart: 3 });
    expect(estimator.estimate("t2", { newText: "abc" })._unsafeUnwrap().basis).toBe("estimated");
    estimator.observe("t1", emptyUsage());
    expect(estimator.estimate("t1", { newText: "abc" })._unsafeUnwrap().basis).toBe("estimated");
    estimator.observe("t1", { ...emptyUsage(), inputUncached: 10 });
    estimator.forget("t1");
    expect(estimator.estimate("t1", { newText: "abc" })._unsafeUnwrap().basis).toBe("estimated");
  });

  it("answers bad input with invalid_input", () => {
    expect(estimateThreadInput({ inputTokens: -1, outputTokens: null }, { newText: "" })._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(estimateThreadInput(null, { newText: 3 } as never)._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(() => createCalibratedEstimator({ marginPercent: -5 })).toThrowError(expect.objectContaining({ code: "invalid_input" }));
  });
});
