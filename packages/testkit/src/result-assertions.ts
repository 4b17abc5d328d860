import type { KeelError } from "@keel/core";
import type { Result, ResultAsync } from "neverthrow";

/** A result, or a promise of one (a `ResultAsync` is both). */
export type AnyResult<T> = Result<T, KeelError> | ResultAsync<T, KeelError> | PromiseLike<Result<T, KeelError>>;

/**
 * The value of a successful result; throws (failing the test) with the error's code and message
 * otherwise. For tests: `const doc = await okValue(store.docs.get(key));`
 */
export async function okValue<T>(outcome: AnyResult<T>): Promise<T> {
  const result = await outcome;
  if (result.isErr()) throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/**
 * The error of a failed result; throws (failing the test) with the value otherwise. For tests:
 * `expect((await errOf(store.docs.put(key, 1, { expectedVersion: 9 }))).code).toBe("conflict");`
 */
export async function errOf<T>(outcome: AnyResult<T>): Promise<KeelError> {
  const result = await outcome;
  if (result.isOk()) throw new Error(`expected an error, got success: ${JSON.stringify(result.value)}`);
  return result.error;
}
