import { UsageSchema, validate, type KeelError, type Usage } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import type { SettleAmounts } from "./budget-reservation.js";
import { defaultPriceTable, priceUsage, type PriceTable, type PricedUsage } from "./usage-price-table.js";

/** Options of {@link actualsFromUsage}. */
export interface ActualsFromUsageOptions {
  /** The model that produced the usage, to price it when the backend reported no cost. */
  model?: string | null;
  /** The price table. Default {@link defaultPriceTable}. */
  prices?: PriceTable;
  /** How long the work took, when known. */
  durationMs?: number | null;
}

/** What {@link actualsFromUsage} found. */
export interface UsageActuals {
  /** Amounts for {@link Reservation.settle}; unknown ones are `null` (charged as reserved). */
  actual: SettleAmounts;
  /** How the cost was found (`null` when there was no usage at all). */
  cost: PricedUsage | null;
}

const OptionsSchema = z.strictObject({
  model: z.string().max(200).nullable().optional(),
  prices: z.custom<PriceTable>((value) => typeof (value as PriceTable | undefined)?.lookup === "function").optional(),
  durationMs: z.number().int().nonnegative().nullable().optional(),
});

/**
 * Turns a normalized usage into settlement amounts. `tokens` is the sum of the known buckets
 * (input of every kind, output, reasoning), or `null` when none is known; since tokens are never
 * refunded below the reservation, a partly known count can only reveal an overrun. `costMicroUsd`
 * is the reported or fully priced cost, or `null` (charged as reserved) when the cost is unpriced
 * or only a lower bound.
 */
export function actualsFromUsage(usage: Usage | null, options: ActualsFromUsageOptions = {}): Result<UsageActuals, KeelError> {
  const checked = validate(OptionsSchema, options, "usage actuals options");
  if (checked.isErr()) return err(checked.error);
  const durationMs = checked.value.durationMs ?? null;
  if (usage === null) return ok({ actual: { tokens: null, timeMs: durationMs, costMicroUsd: null }, cost: null });
  const valid = validate(UsageSchema, usage, "usage");
  if (valid.isErr()) return err(valid.error);
  const buckets = [valid.value.inputUncached, valid.value.cacheRead, valid.value.cacheWrite, valid.value.output, valid.value.reasoning];
  const known = buckets.filter((bucket): bucket is number => bucket !== null);
  const tokens = known.length === 0 ? null : known.reduce((sum, bucket) => sum + bucket, 0);
  return priceUsage(valid.value, checked.value.model ?? null, checked.value.prices ?? defaultPriceTable).map((cost) => ({
    actual: { tokens, timeMs: durationMs, costMicroUsd: cost.costMicroUsd },
    cost,
  }));
}

