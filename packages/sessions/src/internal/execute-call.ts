import { KeelError, toKeelError, validate } from "@keel/core";
import { ResultAsync, err, type Result } from "neverthrow";
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
  return new ResultAsync(call(execute, plan));
}

/** {@link callExecute} as plain awaits: it runs on every turn, where each step of a `ResultAsync` chain costs a promise and a generator. */
async function call(execute: Execute, plan: TurnPlan): Promise<Result<TurnOutcome, KeelError>> {
  let returned: unknown;
  try {
    // A copy, so that the host cannot change the plan the turn goes on with. Every field but the
    // capsule is a primitive: a plan without one needs only a shallow copy.
    returned = await execute(plan.capsule ? structuredClone(plan) : { ...plan });
  } catch (error) {
    return err(toKeelError(error, "backend_failed", "the execute function threw"));
  }
  if (!isResult(returned)) {
    return err(new KeelError("invalid_input", "the execute function must return a Result or ResultAsync of a turn outcome", { details: {} }));
  }
  if (returned.isErr()) return err(toKeelError(returned.error, "backend_failed", "the execute function failed"));
  // The host's own object goes back unchanged; validation only guards what Keel reads from it.
  const outcome = returned.value;
  return validate(TurnOutcomeSchema, outcome, "turn outcome from execute").map(() => outcome as TurnOutcome);
}
