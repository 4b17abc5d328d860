import { KeelError } from "@keel/core";
import type { BackendTurnResult } from "@keel/backend";
import { actualsFromUsage, type Budget, type BudgetScope, type Reservation } from "@keel/budget";
import { err, ok, type Result, type ResultAsync } from "neverthrow";
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
 * Settles a turn's reservation with the actuals of its usage, or abandons it when they cannot be
 * computed; a failure to settle is a `budget`/`settle` warning, never a failed turn.
 */
export function settleReservation(
  reservation: Reservation,
  usage: BackendTurnResult["usage"] | null,
  model: string | null,
  durationMs: number | null,
): ResultAsync<Warned<undefined>, never> {
  const actuals = actualsFromUsage(usage, { model, durationMs });
  const settled = actuals.isOk() ? reservation.settle(actuals.value.actual) : reservation.abandon();
  return warnOnError(
    settled.map(() => undefined),
    undefined,
    "budget",
    "settle",
  );
}
