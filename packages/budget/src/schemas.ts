/**
 * `@keel/budget/schemas`: the zod schemas of limits and amounts, the dimensions, the default
 * prices, and the types of the parts of a snapshot, a settlement, an expiry and a capacity
 * status. The main entry, `@keel/budget`, holds what a host writes against: budgets and their
 * scopes, limits, the capacity gate, pricing and calibration.
 *
 * @packageDocumentation
 */
export { AmountSchema, BUDGET_DIMENSIONS, LimitsSchema, ReserveAmountsSchema } from "./budget-dimensions.js";
export { LimitLevelSchema } from "./limits-intersect.js";
export type { LimitLevel, LimitSource } from "./limits-intersect.js";
export type { ExpireResult, ReservationInfo } from "./budget-scope.js";
export { SettleAmountsSchema } from "./budget-reservation.js";
export type { ScopeLimit, Settlement, SettlementOutcome } from "./budget-snapshot.js";
export type { CapacityRemaining, CapacitySource } from "./capacity-gate.js";
export { DEFAULT_PRICES, defaultPriceTable } from "./usage-price-table.js";
export type { CostBasis } from "./usage-price-table.js";
