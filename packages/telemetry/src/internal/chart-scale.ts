/**
 * Pure scale arithmetic for the report's charts: nice tick steps, a nice axis range around the
 * data, a linear mapping onto pixels and the horizontal offsets that keep series apart.
 */

/** A nice axis: `min`..`max` in steps of `step`, with the tick values in order. */
export interface NiceAxis {
  min: number;
  max: number;
  step: number;
  ticks: number[];
}

/** The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value` (1 for 0 or less). */
export function niceStep(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const fraction = value / power;
  // A fraction of 1.0000000001 from floating point noise still counts as 1.
  const nice = fraction <= 1 + 1e-9 ? 1 : fraction <= 2 + 1e-9 ? 2 : fraction <= 2.5 + 1e-9 ? 2.5 : fraction <= 5 + 1e-9 ? 5 : 10;
  return nice * power;
}

/** Drops floating point noise: `0.30000000000000004` → `0.3` (to a tenth of `step`'s precision). */
function clean(value: number, step: number): number {
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 2);
  return Number(value.toFixed(Math.min(20, digits)));
}

/**
 * A nice axis that covers `[low, high]` with about `targets` intervals: the step is
 * {@link niceStep} of the span over `targets`, and the ends are the multiples of the step at or
 * below `low` and at or above `high`. With `integer`, the step is at least 1 (counts have no
 * half-turns). A span of zero is widened to one step around the value.
 */
export function niceAxis(low: number, high: number, targets = 5, integer = false): NiceAxis {
  const lo = Math.min(low, high);
  const hi = Math.max(low, high);
  const wanted = Math.max(1, Math.round(targets));
  // Below a billionth of the values' size (or of 1) the span is rounding noise: treat it as none.
  const size = Math.max(Math.abs(lo), Math.abs(hi), 1e-9);
  const span = hi - lo > size * 1e-9 ? hi - lo : 0;
  let step = niceStep(span > 0 ? span / wanted : size > 1e-9 ? size / wanted : 1);
  if (integer) step = Math.max(1, Math.ceil(step));
  let min = Math.floor(lo / step) * step;
  let max = Math.ceil(hi / step) * step;
  if (max === min) {
    if (min === 0) max = step;
    else {
      min -= step;
      max += step;
    }
  }
  const ticks: number[] = [];
  const count = Math.round((max - min) / step);
  for (let at = 0; at <= count; at++) ticks.push(clean(min + at * step, step));
  return { min: clean(min, step), max: clean(max, step), step, ticks };
}

/**
 * The axis for a set of non-negative amounts (bytes, tokens): from 0 when the smallest value is
 * under a third of the largest (the bars and lines then keep their proportions), else a nice
 * value at or below the smallest, so the data fills the plot; up to a nice value at or above the
 * largest.
 */
export function amountAxis(values: readonly number[], targets = 5, integer = false): NiceAxis {
  if (values.length === 0) return niceAxis(0, 1, targets, integer);
  const low = Math.min(...values);
  const high = Math.max(...values);
  return niceAxis(low < high / 3 ? 0 : low, high, targets, integer);
}

/** A linear map from `domain` onto `range` (either may run backwards); a zero-width domain maps to the range's middle. */
export function linearScale(domain: readonly [number, number], range: readonly [number, number]): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (value) => r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);
}

/**
 * Horizontal offsets, in pixels, that set `count` series side by side around a shared x:
 * centred on 0, `gap` apart, and never wider in total than `limit`.
 */
export function dodgeOffsets(count: number, gap: number, limit: number): number[] {
  if (count <= 1) return count === 1 ? [0] : [];
  const spacing = Math.min(gap, limit / (count - 1));
  return Array.from({ length: count }, (_, position) => (position - (count - 1) / 2) * spacing);
}
