import { validate, type KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";

/**
 * The part of a task record that calibration reads: the tier it ran at, what was estimated
 * before and what it actually took. Other fields of a record are ignored.
 */
export interface TaskRecord {
  /** The task id (optional, for reference). */
  taskId?: string;
  /** The tier (size class, profile, model tier) the estimate was made for. */
  tier: string;
  /** What was estimated before the task ran; `null` or left out when not estimated. */
  estimated: { calls?: number | null; tokens?: number | null };
  /** What it took; `null` or left out when unknown. */
  actual: { calls?: number | null; tokens?: number | null };
}

/** Distribution of `actual / estimated` over a tier's tasks. */
export interface DriftStats {
  /** Tasks with both numbers known and an estimate above 0. */
  samples: number;
  /** The median ratio: 1 is calibrated, above 1 under-estimates, below 1 over-estimates. */
  medianRatio: number;
  /** The interquartile range of the ratio (p75 − p25): how far estimates scatter. */
  spread: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
}

/** Calibration drift of one tier. */
export interface TierDrift {
  tier: string;
  /** Task records of this tier. */
  tasks: number;
  /** Calls drift, or `null` when no task had both numbers. */
  calls: DriftStats | null;
  /** Token drift, or `null` when no task had both numbers. */
  tokens: DriftStats | null;
  /** Records left out per measure (a number unknown, or an estimate of 0). */
  skipped: { calls: number; tokens: number };
}

const Count = z.number().nonnegative().finite().nullable().optional();
const TaskRecordSchema = z.looseObject({
  taskId: z.string().optional(),
  tier: z.string().min(1).max(200),
  estimated: z.looseObject({ calls: Count, tokens: Count }),
  actual: z.looseObject({ calls: Count, tokens: Count }),
});

/**
 * Calibration drift per tier: for calls and tokens, the median and spread of
 * `actual / estimated` over the task records given (and nothing else). Tiers come out sorted by
 * name; a record with a number unknown or an estimate of 0 is skipped for that measure and counted.
 *
 * @returns the drift per tier, or `invalid_input` for a malformed record.
 */
export function calibrationDrift(tasks: readonly TaskRecord[]): Result<TierDrift[], KeelError> {
  return validate(z.array(TaskRecordSchema).max(1_000_000), tasks, "task records").map((records) => {
    const byTier = new Map<string, { calls: number[]; tokens: number[]; tasks: number; skipped: { calls: number; tokens: number } }>();
    for (const record of records) {
      const tier = byTier.get(record.tier) ?? { calls: [], tokens: [], tasks: 0, skipped: { calls: 0, tokens: 0 } };
      tier.tasks += 1;
      for (const measure of ["calls", "tokens"] as const) {
        const estimated = record.estimated[measure];
        const actual = record.actual[measure];
        if (estimated == null || actual == null || estimated === 0) tier.skipped[measure] += 1;
        else tier[measure].push(actual / estimated);
      }
      byTier.set(record.tier, tier);
    }
    return [...byTier.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tier, data]) => ({ tier, tasks: data.tasks, calls: statsOf(data.calls), tokens: statsOf(data.tokens), skipped: data.skipped }));
  });
}

function statsOf(ratios: number[]): DriftStats | null {
  if (ratios.length === 0) return null;
  const sorted = [...ratios].sort((a, b) => a - b);
  const p25 = quantile(sorted, 0.25);
  const p75 = quantile(sorted, 0.75);
  return {
    samples: sorted.length,
    medianRatio: quantile(sorted, 0.5),
    spread: p75 - p25,
    p25,
    p75,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** Linear-interpolated quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower]!;
  return low + (sorted[upper]! - low) * (position - lower);
}
