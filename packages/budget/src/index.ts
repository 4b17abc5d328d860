/**
 * `@keel/budget`: reservations before work and settlement after it, over any Keel store, with
 * limits that intersect across scopes, a capacity gate, pricing and calibration. The zod schemas,
 * the dimensions, the default prices and the types of a snapshot's parts are in
 * `@keel/budget/schemas`.
 *
 * @packageDocumentation
 */
import { addUsage as coreAddUsage, type Usage as CoreUsage } from "@keel/core";

export type { BudgetDimension, Limits, ReserveAmounts, Totals } from "./budget-dimensions.js";
export { intersectLimits } from "./limits-intersect.js";
export type { EffectiveLimits } from "./limits-intersect.js";
export { createBudget } from "./budget-create.js";
export type { Budget, BudgetOptions, ScopeOptions } from "./budget-create.js";
export type { BudgetScope } from "./budget-scope.js";
export type { Reservation, SettleAmounts } from "./budget-reservation.js";
export type { ScopeSnapshot, SettledSnapshot } from "./budget-snapshot.js";
export { createCapacityGate } from "./capacity-gate.js";
export type { Admission, CapacityGate, CapacityGateOptions, CapacityStatus, TaskAdmissionRequest } from "./capacity-gate.js";
export { createPriceTable, priceUsage } from "./usage-price-table.js";
export type { ModelPrice, PriceTable, PricedUsage } from "./usage-price-table.js";
export { actualsFromUsage } from "./usage-actuals.js";
export type { ActualsFromUsageOptions, UsageActuals } from "./usage-actuals.js";
export { calibrationDrift } from "./calibration-drift.js";
export type { DriftStats, TaskRecord, TierDrift } from "./calibration-drift.js";
export { createCalibratedEstimator, estimateThreadInput } from "./tokens-calibrated-estimator.js";
export type {
  CalibratedEstimator,
  CalibratedEstimatorOptions,
  ThreadText,
  ThreadTokenBaseline,
  ThreadTokenEstimate,
} from "./tokens-calibrated-estimator.js";

/** @deprecated Import `addUsage` from `@keel/core`, its one home; this re-export goes in a later minor. */
export const addUsage: typeof coreAddUsage = coreAddUsage;
/** @deprecated Import the `Usage` type from `@keel/core`, its one home; this re-export goes in a later minor. */
export type Usage = CoreUsage;
