export { AmountSchema, BUDGET_DIMENSIONS, LimitsSchema, ReserveAmountsSchema } from "./budget-dimensions.js";
export type { BudgetDimension, Limits, ReserveAmounts, Totals } from "./budget-dimensions.js";
export { LimitLevelSchema, intersectLimits } from "./limits-intersect.js";
export type { EffectiveLimits, LimitLevel, LimitSource } from "./limits-intersect.js";
export { createBudget } from "./budget-create.js";
export type { Budget, BudgetOptions, ScopeOptions } from "./budget-create.js";
export type { BudgetScope, ExpireResult, ReservationInfo } from "./budget-scope.js";
export { SettleAmountsSchema } from "./budget-reservation.js";
export type { Reservation, SettleAmounts } from "./budget-reservation.js";
export type { ScopeLimit, ScopeSnapshot, SettledSnapshot, Settlement, SettlementOutcome } from "./budget-snapshot.js";
export { createCapacityGate } from "./capacity-gate.js";
export type {
  Admission,
  CapacityGate,
  CapacityGateOptions,
  CapacityRemaining,
  CapacitySource,
  CapacityStatus,
  TaskAdmissionRequest,
} from "./capacity-gate.js";
export { addUsage } from "@keel/core";
export type { Usage } from "@keel/core";
export { DEFAULT_PRICES, createPriceTable, defaultPriceTable, priceUsage } from "./usage-price-table.js";
export type { CostBasis, ModelPrice, PriceTable, PricedUsage } from "./usage-price-table.js";
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
