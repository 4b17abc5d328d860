import type { BudgetAmounts, EventBus, JsonValue } from "@keel/core";
import { BUDGET_DIMENSIONS, type Totals } from "../budget-dimensions.js";
import type { Settlement } from "../budget-snapshot.js";
import type { Refusal, ThresholdCrossed } from "./ledger-rules.js";

/** Emits budget events; a missing bus emits nothing. Events are emitted after the change committed. */
export interface LedgerEvents {
  reserved(scope: string, reservationId: string, amounts: Totals): void;
  refused(scope: string, amounts: Totals, refusal: Refusal): void;
  settled(scope: string, reservationId: string, settlement: Settlement): void;
  thresholds(crossed: readonly ThresholdCrossed[]): void;
}

function nonZero(totals: Totals): { dimensions: string[]; amounts: BudgetAmounts } {
  const dimensions: string[] = [];
  const amounts: BudgetAmounts = {};
  for (const dimension of BUDGET_DIMENSIONS) {
    if (totals[dimension] === 0) continue;
    dimensions.push(dimension);
    amounts[dimension] = totals[dimension];
  }
  return { dimensions, amounts };
}

/** Plain JSON of totals. */
export function totalsJson(totals: Totals): Record<string, JsonValue> {
  return { ...totals };
}

/** Builds the event emitters over `bus`. */
export function createLedgerEvents(bus: EventBus | undefined, now: () => number): LedgerEvents {
  if (!bus) return { reserved() {}, refused() {}, settled() {}, thresholds() {} };
  return {
    reserved(scope, reservationId, amounts) {
      bus.emit({ type: "budget.reserved", at: now(), scope, ...nonZero(amounts), limitingScope: null, reservationId });
    },
    refused(scope, amounts, refusal) {
      bus.emit({
        type: "budget.refused",
        at: now(),
        scope,
        dimensions: [refusal.dimension],
        amounts: nonZero(amounts).amounts,
        limitingScope: refusal.scope,
        details: refusalDetails(scope, refusal),
      });
    },
    settled(scope, reservationId, settlement) {
      bus.emit({
        type: "budget.settled",
        at: now(),
        scope,
        ...nonZero(settlement.charged),
        limitingScope: null,
        reservationId,
        details: {
          outcome: settlement.outcome,
          reserved: totalsJson(settlement.reserved),
          charged: totalsJson(settlement.charged),
          refunded: totalsJson(settlement.refunded),
          overrun: totalsJson(settlement.overrun),
        },
      });
    },
    thresholds(crossed) {
      for (const threshold of crossed) {
        bus.emit({
          type: "budget.threshold",
          at: now(),
          scope: threshold.scope,
          dimensions: [threshold.dimension],
          amounts: { [threshold.dimension]: threshold.used },
          limitingScope: threshold.scope,
          details: { percent: threshold.percent, used: threshold.used, limit: threshold.limit, level: threshold.source },
        });
      }
    },
  };
}

/** The `details` of a `budget_exceeded` error and of its `budget.refused` event. */
export function refusalDetails(scope: string, refusal: Refusal): Record<string, JsonValue> {
  return {
    scope,
    limitingScope: refusal.scope,
    level: refusal.source,
    dimension: refusal.dimension,
    asked: refusal.asked,
    remaining: refusal.remaining,
    limit: refusal.limit,
    violations: refusal.violations.map((violation) => ({
      scope: violation.scope,
      level: violation.source,
      dimension: violation.dimension,
      asked: violation.asked,
      remaining: violation.remaining,
      limit: violation.limit,
    })),
  };
}
