import { isSafeName, validate, type KeelError } from "@keel/core";
import type { Result } from "neverthrow";
import { z } from "zod";
import { BUDGET_DIMENSIONS, LimitsSchema, type BudgetDimension, type Limits } from "./budget-dimensions.js";

/**
 * Limits set at one named level: `global`, `workflow`, `profile`, `role`, `task`, `session` or
 * any other name (a safe name).
 */
export interface LimitLevel {
  /** The level's name, reported as the source of every limit it sets. */
  name: string;
  /** Its limits; a dimension left out is not limited at this level. */
  limits: Limits;
}

/** One effective limit and the level that set it. */
export interface LimitSource {
  /** The limit (a non-negative integer). */
  limit: number;
  /** The name of the level that set it (the strictest one). */
  source: string;
}

/** Effective limits per dimension; a dimension left out is unlimited. */
export type EffectiveLimits = Partial<Record<BudgetDimension, LimitSource>>;

/** zod schema of {@link LimitLevel}. */
export const LimitLevelSchema = z.strictObject({
  name: z.string().refine(isSafeName, {
    message: "not a safe name: use 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit",
  }),
  limits: LimitsSchema,
});

const LevelsSchema = z.array(LimitLevelSchema);

/**
 * Intersects limits from several levels: per dimension the strictest (smallest) limit wins, and
 * its level is remembered as the `source`. A dimension no level limits stays unlimited (absent).
 *
 * The result does not depend on the order of the levels (when two levels set the same smallest
 * limit, the name that sorts first is the source) and intersecting a level with itself changes
 * nothing.
 *
 * @returns the effective limits, or `invalid_input` when a level is malformed (a name that is not a
 *   safe name, a negative or fractional limit, an unknown dimension).
 *
 * @example
 * ```ts
 * const limits = intersectLimits(
 *   { name: "global", limits: { tokens: 1_000_000, costMicroUsd: 5_000_000 } },
 *   { name: "role", limits: { tokens: 200_000 } },
 * )._unsafeUnwrap();
 * // { tokens: { limit: 200000, source: "role" }, costMicroUsd: { limit: 5000000, source: "global" } }
 * ```
 */
export function intersectLimits(...levels: LimitLevel[]): Result<EffectiveLimits, KeelError> {
  return validate(LevelsSchema, levels, "limit levels").map((valid) => intersectValidLevels(valid));
}

/** {@link intersectLimits} over levels already validated. */
export function intersectValidLevels(levels: readonly LimitLevel[]): EffectiveLimits {
  const effective: EffectiveLimits = {};
  for (const level of levels) {
    for (const dimension of BUDGET_DIMENSIONS) {
      const limit = level.limits[dimension];
      if (limit === undefined) continue;
      const current = effective[dimension];
      if (!current || isStricter(limit, level.name, current)) {
        effective[dimension] = { limit, source: level.name };
      }
    }
  }
  return effective;
}

/** Whether (`limit`, `source`) wins over `current`: a smaller limit, or the same one from a name sorting first. */
export function isStricter(limit: number, source: string, current: LimitSource): boolean {
  return limit < current.limit || (limit === current.limit && source < current.source);
}
