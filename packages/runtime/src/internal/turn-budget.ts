import { KeelError } from "@keel/core";
import type { BackendTurnResult } from "@keel/backend";
import { actualsFromUsage, type Budget, type BudgetScope, type Reservation, type ReserveAmounts } from "@keel/budget";
import { err, ok, okAsync, type Result, type ResultAsync } from "neverthrow";
import type { ScopeDeclaration } from "./turn-plan.js";
import { warnOnError, type Warned } from "./turn-warnings.js";

/**
 * Declares a plan's budget scopes in the ledger, each the parent of the next, and returns the
 * last (the one a turn reserves from). A declaration the ledger refuses is `invalid_input`.
 */
export function declareScopes(budget: Budget, declarations: readonly ScopeDeclaration[]): Result<BudgetScope, KeelError> {
  try {
    let parent: BudgetScope | undefined;
    for (const { id, limits } of declarations) {
      parent = budget.scope(id, { ...(parent ? { parents: [parent] } : {}), ...(limits ? { limits } : {}) });
    }
    if (!parent) return err(new KeelError("invalid_input", "a role turn declares at least its mission's budget scope", { details: {} }));
    return ok(parent);
  } catch (error) {
    return err(KeelError.is(error) ? error : new KeelError("invalid_input", String(error)));
  }
}

/**
 * A turn's budget reservation, made when the turn first calls its backend: after the role's lease
 * is held and the prompt is built. A turn that never reaches its backend (`lease_held` or another
 * lease error, a prompt refused, an abort before the call) reserves nothing, so it leaves the
 * ledger, and the `budget.*` events, as if it never ran. Reserving late is the only way: the
 * budget has no close that charges nothing (however a reservation is closed, its tokens and its
 * call stay charged).
 */
export interface TurnReservation {
  /**
   * Reserves on the first call (`budget_exceeded` when it does not fit: nothing is held); later
   * calls, such as a fresh retry after `resume_failed`, answer the same outcome without reserving
   * again: a turn holds one reservation.
   */
  take(): ResultAsync<Reservation, KeelError>;
  /** The reservation once made; `undefined` while the turn has not reached its backend, or when it was refused. */
  made(): Reservation | undefined;
}

/** The {@link TurnReservation} of a turn that reserves `amounts` on `scope` when its backend is first called. */
export function reserveOnFirstCall(scope: BudgetScope, amounts: ReserveAmounts): TurnReservation {
  let taken: ResultAsync<Reservation, KeelError> | undefined;
  let made: Reservation | undefined;
  return {
    take: () =>
      (taken ??= scope.reserve(amounts).map((reservation) => {
        made = reservation;
        return reservation;
      })),
    made: () => made,
  };
}

/**
 * Settles a turn's reservation (if it made one) with the actuals of its usage, or abandons it
 * when they cannot be computed; a failure to settle is a `budget`/`settle` warning, never a failed turn.
 */
export function settleReservation(
  reservation: Reservation | undefined,
  usage: BackendTurnResult["usage"] | null,
  model: string | null,
  durationMs: number | null,
): ResultAsync<Warned<undefined>, never> {
  // A turn that ran reached its backend, so it reserved; without a reservation there is nothing to settle.
  if (!reservation) return okAsync({ value: undefined, warnings: [] });
  const actuals = actualsFromUsage(usage, { model, durationMs });
  const settled = actuals.isOk() ? reservation.settle(actuals.value.actual) : reservation.abandon();
  return warnOnError(
    settled.map(() => undefined),
    undefined,
    "budget",
    "settle",
  );
}
