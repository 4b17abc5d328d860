import type { KeelError } from "@keel/core";
import { okAsync, type ResultAsync } from "neverthrow";
import type { RuntimeWarning } from "../role-turn.js";

/** A step's value with the warnings it raised, in the order they were raised. */
export interface Warned<T> {
  value: T;
  warnings: RuntimeWarning[];
}

/** What a runtime warning (not a session's own) is about. */
export type RuntimeWarningTarget = "budget" | "skills" | "instructions" | "backend" | "work_session" | "checkpoint";

/**
 * `result`'s value with no warning, or, when it failed, `fallback` with one warning naming
 * `target` and `operation`: a failure that must not fail the turn becomes data the turn returns.
 */
export function warnOnError<T>(
  result: ResultAsync<T, KeelError>,
  fallback: T,
  target: RuntimeWarningTarget,
  operation: string,
): ResultAsync<Warned<T>, never> {
  return result
    .map((value): Warned<T> => ({ value, warnings: [] }))
    
    .orElse((error) => okAsync<Warned<T>, never>({ value: fallback, warnings: [{ target, operation, code: error.code, message: error.message }] }));
}
