import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { amountAxis, dodgeOffsets, linearScale, niceAxis, niceStep } from "./chart-scale.js";

describe("niceStep", () => {
  it("rounds up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect([0.7, 1, 1.2, 2, 2.2, 2.5, 3, 5, 7, 10].map(niceStep)).toEqual([1, 1, 2, 2, 2.5, 2.5, 5, 5, 10, 10]);
    expect(niceStep(0.013)).toBeCloseTo(0.02, 12);
    expect(niceStep(1_234)).toBe(2_000);
    expect(niceStep(0.3 / 3)).toBeCloseTo(0.1, 12);
  });

  it("answers 1 for zero, negative or non-finite input", () => {
    expect([0, -5, Number.NaN, Number.POSITIVE_INFINITY].map(niceStep)).toEqual([1, 1, 1, 1]);
  });
});

describe("niceAxis", () => {
  it("covers the data tightly with nice ticks", () => {
    expect(niceAxis(0, 1_010)).toEqual({ min: 0, max: 1_250, step: 250, ticks: [0, 250, 500, 750, 1_000, 1_250] });
    expect(niceAxis(87, 1_010)).toEqual({ min: 0, max: 1_200, step: 200, ticks: [0, 200, 400, 600, 800, 1_000, 1_200] });
    expect(niceAxis(4_200, 4_950)).toEqual({ min: 4_200, max: 5_000, step: 200, ticks: [4_200, 4_400, 4_600, 4_800, 5_000] });
    expect(niceAxis(0.1, 0.7).ticks).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
  });

  it("widens a span of zero to one step around the value", () => {
    expect(niceAxis(0, 0)).toEqual({ min: 0, max: 1, step: 1, ticks: [0, 1] });
    expect(niceAxis(5, 5)).toEqual({ min: 4, max: 6, step: 1, ticks: [4, 5, 6] });
  });

  it("keeps integer steps for counts", () => {
    expect(niceAxis(0, 3, 4, true)).toEqual({ min: 0, max: 3, step: 1, ticks: [0, 1, 2, 3] });
    expect(niceAxis(0, 8, 4, true).ticks).toEqual([0, 2, 4, 6, 8]);
  });

  it("always covers the data with ticks a step apart (property)", () => {
    // Values in hundredths, as the report's amounts and averages are.
    const hundredths = (max: number) => fc.integer({ min: -max, max }).map((value) => value / 100);
    fc.assert(
      fc.property(hundredths(1e9), hundredths(1e9).map(Math.abs), fc.integer({ min: 1, max: 10 }), (low, span, targets) => {
        const axis = niceAxis(low, low + span, targets);
        // Covered up to floating point noise (727726.27 + 0.17 is 727726.4400000001).
        const noise = 1e-9 * Math.max(1, Math.abs(low), Math.abs(low + span));
        expect(axis.min).toBeLessThanOrEqual(low + noise);
        expect(axis.max).toBeGreaterThanOrEqual(low + span - noise);
        expect(axis.ticks[0]).toBe(axis.min);
        expect(axis.ticks[axis.ticks.length - 1]).toBe(axis.max);
        // Never more than about twice the intervals asked for, so the axis stays close to the data.
        expect(axis.ticks.length - 1).toBeLessThanOrEqual(2 * targets + 2);
        for (let at = 1; at < axis.ticks.length; at++) {
          expect((axis.ticks[at] ?? 0) - (axis.ticks[at - 1] ?? 0)).toBeCloseTo(axis.step, 6);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("amountAxis", () => {
  it("starts at zero when the smallest value is under a third of the largest", () => {
    expect(amountAxis([87, 640, 1_010]).min).toBe(0);
    expect(amountAxis([], 5, true).ticks).toEqual([0, 1]);
  });

  it("zooms onto the data when the values are close together", () => {
    const axis = amountAxis([4_210, 4_500, 4_950]);
    expect(axis.min).toBe(4_200);
    expect(axis.max).toBe(5_000);
  });
});

describe("linearScale", () => {
  it("maps the domain onto the range, backwards ranges included", () => {
    const y = linearScale([0, 1_250], [220, 30]);
    expect(y(0)).toBe(220);
    expect(y(1_250)).toBe(30);
    expect(y(625)).toBe(125);
  });

  it("maps a zero-width domain to the middle of the range", () => {
    expect(linearScale([3, 3], [10, 20])(3)).toBe(15);
  });
});

describe("dodgeOffsets", () => {
  it("centres the series on zero, a gap apart, within the limit", () => {
    expect(dodgeOffsets(3, 7, 100)).toEqual([-7, 0, 7]);
    expect(dodgeOffsets(2, 7, 100)).toEqual([-3.5, 3.5]);
    expect(dodgeOffsets(5, 10, 20)).toEqual([-10, -5, 0, 5, 10]);
    expect(dodgeOffsets(1, 7, 100)).toEqual([0]);
    expect(dodgeOffsets(0, 7, 100)).toEqual([]);
  });
});
