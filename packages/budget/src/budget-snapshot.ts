import { BUDGET_DIMENSIONS, type BudgetDimension, type Totals } from "./budget-dimensions.js";
import { emptyScopeEntry, own, type Ledger } from "./internal/ledger-schema.js";
import { remainingOf, type ScopeDeclaration } from "./internal/ledger-rules.js";
import type { LimitSource } from "./limits-intersect.js";
import type { BudgetScope } from "./budget-scope.js";

/** An effective limit of a scope: its value, the level that set it and the scope that declared it. */
export interface ScopeLimit extends LimitSource {
  /** The scope (this one or an ancestor) whose limits hold it. */
  scope: string;
}

/**
 * The state of a scope: its effective limits (with their source), its counters (which include
 * every descendant's reservations) and what is left per dimension.
 */
export interface ScopeSnapshot {
  /** The scope id. */
  scope: string;
  /** Its parents' ids. */
  parents: string[];
  /** The root scope of its ledger. */
  root: string;
  /** Effective limits: the strictest over the scope and its ancestors. Unlimited dimensions are absent. */
  limits: Partial<Record<BudgetDimension, ScopeLimit>>;
  /** Held by open reservations. */
  reserved: Totals;
  /** Charged by settled, abandoned and expired reservations. */
  settled: Totals;
  /** The part of `settled` charged above reservations (reported overruns). */
  overrun: Totals;
  /**
   * What can still be reserved here per dimension: the least left over the scope and its
   * ancestors; `null` when nothing limits the dimension.
   */
  remaining: Record<BudgetDimension, number | null>;
  /** The scope whose room decides `remaining`, per dimension (`null` when unlimited). */
  bindingScope: Record<BudgetDimension, string | null>;
  /** Open reservations charged to this scope (made on it or on a descendant). */
  openReservations: number;
}

/**
 * How a reservation was closed: `settled` (actuals reported), `abandoned` (outcome unknown) or
 * `expired` (never closed in time; found by {@link BudgetScope.expireStale}).
 */
export type SettlementOutcome = "settled" | "abandoned" | "expired";

/** What closing one reservation charged, per dimension. */
export interface Settlement {
  /** How it was closed. */
  outcome: SettlementOutcome;
  /** What was reserved. */
  reserved: Totals;
  /** What is now charged for it. */
  charged: Totals;
  /** What was given back: only unused known time and a reported cost below the reservation. */
  refunded: Totals;
  /** What was charged above the reservation (flagged overruns). */
  overrun: Totals;
}

/** A snapshot returned by {@link Reservation.settle} and {@link Reservation.abandon}, with the settlement. */
export interface SettledSnapshot extends ScopeSnapshot {
  settlement: Settlement;
}

/** Computes a scope's snapshot from its ledger and its declared chain (the scope first). */
export function snapshotOf(ledger: Ledger | undefined, root: string, chain: readonly ScopeDeclaration[]): ScopeSnapshot {
  const self = chain[0]!;
  const entryOf = (id: string) => (ledger ? own(ledger.scopes, id) : undefined) ?? emptyScopeEntry();
  const entry = entryOf(self.id);
  const limits: Partial<Record<BudgetDimension, ScopeLimit>> = {};
  const remaining = { tokens: null, timeMs: null, calls: null, costMicroUsd: null } as Record<BudgetDimension, number | null>;
  const bindingScope = { tokens: null, timeMs: null, calls: null, costMicroUsd: null } as Record<BudgetDimension, string | null>;
  for (const dimension of BUDGET_DIMENSIONS) {
    for (const declaration of chain) {
      const limit = declaration.limits[dimension];
      if (!limit) continue;
      const current = limits[dimension];
      if (!current || limit.limit < current.limit) limits[dimension] = { ...limit, scope: declaration.id };
      const left = remainingOf(entryOf(declaration.id), dimension, limit.limit);
      const least = remaining[dimension];
      if (least === null || left < least) {
        remaining[dimension] = left;
        bindingScope[dimension] = declaration.id;
      }
    }
  }
  const openReservations = ledger ? Object.values(ledger.open).filter((open) => open.chain.includes(self.id)).length : 0;
  return {
    scope: self.id,
    parents: [...self.parents],
    root,
    limits,
    reserved: { ...entry.reserved },
    settled: { ...entry.settled },
    overrun: { ...entry.overrun },
    remaining,
    bindingScope,
    openReservations,
  };
}
