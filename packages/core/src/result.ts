import type { Result } from "neverthrow";
import { KeelError } from "./errors.js";

/**
 * The value of an `Ok`, or throws the error of an `Err` as it is (for Keel's ports, the
 * `KeelError` with its stable `code`). For hosts that prefer exceptions to `Result` values:
 * Keel's ports return `Result`/`ResultAsync` so that expected failures are visible in the
 * types, and this turns one back into a throw at the host's boundary.
 *
 * A `ResultAsync` is awaited first: `unwrapOrThrow(await keel.openWorkSession(...))`.
 *
 * @param result - a neverthrow `Result` (an awaited `ResultAsync`).
 * @returns the `Ok` value.
 * @throws the `Err` error unchanged; a `KeelError` `invalid_input` when `result` is not a
 *   `Result` (for instance a `ResultAsync` that was not awaited).
 *
 * @example
 * ```ts
 * import { KeelError, unwrapOrThrow } from "@keel/core";
 *
 * try {
 *   const capsule = unwrapOrThrow(await keel.sessions.readCapsule("m1", "engineer"));
 * } catch (error) {
 *   if (KeelError.is(error, "corrupt")) console.error(error.details);
 * }
 * ```
 */
export function unwrapOrThrow<T, E>(result: Result<T, E>): T {
  if (!isResult(result)) {
    const hint = isThenable(result) ? " (a ResultAsync or Promise: await it first)" : "";
    throw new KeelError("invalid_input", `unwrapOrThrow expects a neverthrow Result${hint}`);
  }
  if (result.isErr()) throw result.error;
  return result.value;
}

function isResult(value: unknown): value is Result<unknown, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { isOk?: unknown; isErr?: unknown };
  return typeof candidate.isOk === "function" && typeof candidate.isErr === "function" && !isThenable(value);
}

function isThenable(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
