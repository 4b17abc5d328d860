import { KeelError, toKeelError, validate } from "@keel/core";
import { ResultAsync, err } from "neverthrow";
import { TurnOutcomeSchema, type Execute, type TurnOutcome, type TurnPlan } from "../turn-types.js";

function isResult(value: unknown): value is { isOk(): boolean; isErr(): boolean; value?: unknown; error?: unknown } {
  return typeof value === "object" && value !== null && typeof (value as { isOk?: unknown }).isOk === "function";
}

/**
 * Calls the host's execute function safely: a throw or rejection becomes `backend_failed`, a
 * returned value that is not a `Result` or holds an invalid outcome becomes `invalid_input`, and
 * an error that is not a `KeelError` becomes `backend_failed`.
 */
export function callExecute(execute: Execute, plan: TurnPlan): ResultAsync<TurnOutcome, KeelError> {
  const safe = ResultAsync.fromThrowable(
    async (given: TurnPlan) => await execute(structuredClone(given)),
    (error) => toKeelError(error, "backend_failed", "the execute function threw"),
  );
  return safe(plan).andThen((returned: unknown) => {
    if (!isResult(returned)) {
      return err(new KeelError("invalid_input", "the execute function must return a Result or ResultAsync of a turn outcome", { details: {} }));
    }
    if (returned.isErr()) return err(toKeelError(returned.error, "backend_failed", "the execute function failed"));
    // The host's own object goes back unchanged; validation only guards what Keel reads from it.
    return validate(TurnOutcomeSchema, returned.value, "turn outcome from execute").map(() => returned.value as TurnOutcome);
  });
}
