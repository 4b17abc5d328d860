import { z } from "zod";

/**
 * The four budget dimensions. Every amount is a non-negative integer:
 * - `tokens` — model tokens (input of every kind plus output);
 * - `timeMs` — milliseconds of work;
 * - `calls` — model (or backend) calls;
 * - `costMicroUsd` — cost in millionths of a US dollar (integers avoid float drift).
 */
export const BUDGET_DIMENSIONS = ["tokens", "timeMs", "calls", "costMicroUsd"] as const;

/** One budget dimension. See {@link BUDGET_DIMENSIONS}. */
export type BudgetDimension = (typeof BUDGET_DIMENSIONS)[number];

/**
 * Amounts per dimension, as asked by {@link BudgetScope.reserve}. A dimension left out is 0
 * (nothing of it is reserved).
 */
export interface ReserveAmounts {
  tokens?: number;
  timeMs?: number;
  calls?: number;
  costMicroUsd?: number;
}

/**
 * Limits per dimension. A dimension left out is not limited at this level; `0` allows nothing of
 * it.
 */
export type Limits = { [K in BudgetDimension]?: number | undefined };

/** An amount for every dimension (what a ledger counts). */
export type Totals = Record<BudgetDimension, number>;

/** A non-negative safe integer (the only kind of amount a ledger holds). */
export const AmountSchema = z
  .number()
  .int("must be a whole number")
  .nonnegative("must not be negative")
  .max(Number.MAX_SAFE_INTEGER, "must be at most Number.MAX_SAFE_INTEGER");

/** zod schema of {@link ReserveAmounts}: unknown dimensions are rejected. */
export const ReserveAmountsSchema = z.strictObject({
  tokens: AmountSchema.optional(),
  timeMs: AmountSchema.optional(),
  calls: AmountSchema.optional(),
  costMicroUsd: AmountSchema.optional(),
});

/** zod schema of {@link Limits}: unknown dimensions are rejected. */
export const LimitsSchema = ReserveAmountsSchema;

/** A {@link Totals} of zeros. */
export function zeroTotals(): Totals {
  return { tokens: 0, timeMs: 0, calls: 0, costMicroUsd: 0 };
}

/** Fills the dimensions left out of `amounts` with 0. */
export function toTotals(amounts: { [K in BudgetDimension]?: number | undefined }): Totals {
  return {
    tokens: amounts.tokens ?? 0,
    timeMs: amounts.timeMs ?? 0,
    calls: amounts.calls ?? 0,
    costMicroUsd: amounts.costMicroUsd ?? 0,
  };
}
